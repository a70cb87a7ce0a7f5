#!/usr/bin/env bash
# Probe: why the workflow's 2d-do 1xP run at scale S is slower than the same `bfs run` command
# from a shell (BENCHMARKS.md, "The full GPU-box config ... part way" and the headline call of
# 2026-11-28: 650.7 GTEPS through snakemake, 845.1 from a shell, same host, same call).
# In one call, alternated: the command from a shell; the same with the thread variables
# snakemake exports to a job of 4 threads; and snakemake running only that job, its launcher
# wrapped to record the job's environment and CPU affinity. Run inside bench/device.sh's
# environment (multicast off, PYTHONPATH=.:bench, mpiexec as root):
#   OUT=dir S=26 ROOTS=16 GPUS=4 bash bench/probes/workflow_gap.sh
set -euo pipefail
S=${S:-26} ROOTS=${ROOTS:-16} GPUS=${GPUS:-4}
WORK=${WORK:-/tmp/bfs-gap}; rm -rf "$WORK"; mkdir -p "$WORK"
cmd=(python3 -m bfs run
     --generate "kronecker:scale=$S,edgefactor=16,seeds=2:3,version=3.0,name=kron-s$S"
     --grid "1x$GPUS" --algorithm 2d-do --backend gpu --exchange scan --comm nccl
     --roots "$ROOTS" --save-parents 1)
teps() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); m=r['measurements']; \
print(f\"{sys.argv[2]}: {m['hmean_teps']/1e9:.1f} GTEPS, valid {r['valid']}\")" "$1/run.json" "$2"; }
shell_run() {  # label, then env assignments
  local label=$1; shift
  env "$@" mpiexec -n "$GPUS" "${cmd[@]}" --out "$WORK/$label" 2> "$OUT/$label.log"
  teps "$WORK/$label" "$label" | tee -a "$OUT/gap.md"
}
shell_run shell-1
shell_run smk-thread-env OMP_NUM_THREADS=$GPUS GOTO_NUM_THREADS=$GPUS \
  OPENBLAS_NUM_THREADS=$GPUS MKL_NUM_THREADS=$GPUS VECLIB_MAXIMUM_THREADS=$GPUS \
  NUMEXPR_NUM_THREADS=$GPUS
cat > "$WORK/mpiwrap.sh" <<WRAP
#!/usr/bin/env bash
env | sort > "$OUT/job-env.txt"
grep Cpus_allowed_list /proc/self/status >> "$OUT/job-env.txt"
ulimit -a >> "$OUT/job-env.txt"
exec mpiexec "\$@"
WRAP
chmod +x "$WORK/mpiwrap.sh"
python3 - "$WORK/config.yaml" "$S" "$ROOTS" "$GPUS" <<'PY'
import sys, yaml
path, scale, roots, gpus = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
c = yaml.safe_load(open("config/one_gpu.yaml"))
c.update(results="results", roots=roots, exclusive_gpus=gpus)
c["graphs"] = {"kronecker": {f"kron-s{scale}": {"scale": scale, "edgefactor": 16,
                                                "in_place": True}}}
c.pop("comparisons", None)
c["experiments"] = {"headline": {**c["experiments"]["headline"], "graphs": [f"kron-s{scale}"],
                                 "grids": [f"1x{gpus}"]}}
yaml.safe_dump(c, open(path, "w"))
PY
run="results/runs/kron-s$S/2d-do/gpu-1x$GPUS-scan"
# the target first: --configfile, --set-resources and --resources each take every word after them
${SNAKEMAKE:-python3 -m snakemake} "$run" -s "$PWD/Snakefile" -d "$WORK" -c 16 \
  --configfile "$WORK/config.yaml" --set-resources "bfs_mpi:mpi=$WORK/mpiwrap.sh" \
  --resources gpu="$GPUS" \
  > "$OUT/snakemake.log" 2>&1 && teps "$WORK/$run" snakemake | tee -a "$OUT/gap.md" \
  || tail -20 "$OUT/snakemake.log"
shell_run shell-2
shell_run omp-only OMP_NUM_THREADS=$GPUS
shell_run smk-thread-env-2 OMP_NUM_THREADS=$GPUS GOTO_NUM_THREADS=$GPUS \
  OPENBLAS_NUM_THREADS=$GPUS MKL_NUM_THREADS=$GPUS VECLIB_MAXIMUM_THREADS=$GPUS \
  NUMEXPR_NUM_THREADS=$GPUS
shell_run shell-3
env | sort > "$OUT/shell-env.txt"
