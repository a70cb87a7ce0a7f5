#!/usr/bin/env bash
# A stage of bench/device.sh (which sets the environment every stage shares: multicast off,
# mpiexec as root, PYTHONPATH, $OUT/gpu.txt); run it as `bash bench/device.sh STAGE ...`.
# BENCHMARKS.md's headline rows through the workflow, in one call: `bfs bench` (merrill-do;
# 2d-do and 2d on a 1x1 grid; with GPUS=P > 1, 2d-do on 1xP too) and then `snakemake` on
# config/one_gpu.yaml's `headline` experiment at scale S (graphs generated in place; grids 1x1
# and 1xP), its report (COST of 2d-do against merrill-do), and the GTEPS of both side by side;
# with GPUS > 1 the workflow's 2d-do 1xP command run from a shell too (bench, the command and
# the workflow's run of it in one call: where a gap between bench and the workflow comes from).
# snakemake importable (carried as wheels where it is not installed):
#   OUT=dir S=25 [ROOTS=64] [GPUS=2] bash bench/device.sh headline
set -euo pipefail
S=${S:-25} ROOTS=${ROOTS:-64} GPUS=${GPUS:-1}
WORK=${WORK:-/tmp/bfs-headline}
rm -rf "$WORK" && mkdir -p "$WORK"
start=$(date +%s)
if [ -z "${SKIP_BENCH:-}" ]; then   # SKIP_BENCH=1: the workflow alone
python3 -m bfs bench --backend gpu --scales "$S" --algorithms merrill-do --roots "$ROOTS" \
  --out "$WORK/bench/single.json" 2> "$OUT/bench-single.log"
mpiexec -n 1 python3 -m bfs bench --backend gpu --grid 1x1 --scales "$S" \
  --algorithms 2d-do,2d --roots "$ROOTS" --out "$WORK/bench/grid.json" 2> "$OUT/bench-grid.log"
if [ "$GPUS" -gt 1 ]; then
  mpiexec -n "$GPUS" python3 -m bfs bench --backend gpu --grid "1x$GPUS" --scales "$S" \
    --algorithms 2d-do --roots "$ROOTS" --out "$WORK/bench/grid$GPUS.json" \
    2> "$OUT/bench-grid$GPUS.log"
fi
cp "$WORK"/bench/*.json "$OUT/"
if [ "$GPUS" -gt 1 ]; then
  # the workflow's own bfs_mpi command for 2d-do on 1xP, from a shell: beside bench and the
  # workflow's run of it in one call, a gap between those two is the launcher's (snakemake) or
  # the search path's (bfs run) (BENCHMARKS.md, "The full GPU-box config ... part way")
  mpiexec -n "$GPUS" python3 -m bfs run \
    --generate "kronecker:scale=$S,edgefactor=16,seeds=2:3,version=3.0,name=kron-s$S" \
    --grid "1x$GPUS" --algorithm 2d-do --backend gpu --exchange scan --comm nccl \
    --roots "$ROOTS" --save-parents 1 --out "$WORK/shell-run" 2> "$OUT/shell-run.log"
  mkdir -p "$OUT/shell-run" && cp "$WORK/shell-run/run.json" "$OUT/shell-run/"
fi
echo "bench: $(( $(date +%s) - start )) s" | tee "$OUT/times.txt"
fi
python3 - "$WORK/config.yaml" "$S" "$ROOTS" "$GPUS" <<'PY'
import sys, yaml
path, scale, roots, gpus = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
c = yaml.safe_load(open("config/one_gpu.yaml"))
graph = f"kron-s{scale}"
c.update(results="results", roots=roots)
# every GPU job asks for all the box's GPUs, so with --resources gpu=GPUS one runs at a time:
# two one-GPU jobs would otherwise both drive device 0 (and time each other)
c["exclusive_gpus"] = gpus
c["graphs"] = {"kronecker": {graph: {"scale": scale, "edgefactor": 16, "in_place": True}}}
c.pop("comparisons", None)       # they name runs of the experiments dropped here
grids = ["1x1"] + ([f"1x{gpus}"] if gpus > 1 else [])
c["experiments"] = {"headline": {**c["experiments"]["headline"], "graphs": [graph],
                                 "grids": grids}}
yaml.safe_dump(c, open(path, "w"))
PY
smk() { ${SNAKEMAKE:-python3 -m snakemake} -s "$PWD/Snakefile" -d "$WORK" \
          --configfile "$WORK/config.yaml" "$@"; }
start=$(date +%s)
smk -c 16 --resources gpu="$GPUS" --scheduler greedy > "$OUT/workflow.log" 2>&1
smk --report "$WORK/results/report.html" --scheduler greedy >> "$OUT/workflow.log" 2>&1
echo "workflow + report: $(( $(date +%s) - start )) s" | tee -a "$OUT/times.txt"
cp "$WORK"/results/tables/*.md "$WORK"/results/figures/*.png "$WORK/results/report.html" "$OUT/"
python3 - "$WORK" "$OUT" <<'PY' | tee "$OUT/headline.md"
import json, pathlib, sys
work, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
bench = {}
for f in sorted(out.glob("*.json")):      # single, grid (1x1), gridP (1xP)
    data = json.loads(f.read_text())
    grid = "x".join(map(str, data.get("grid") or [1, 1]))
    for rec in data["records"]:
        for name, a in rec["algorithms"].items():
            bench[(name, grid)] = a["hmean_teps"]
def row(label, run_json):
    """A run's GTEPS beside bench's of its algorithm and grid."""
    r = json.loads(run_json.read_text())
    name = r["parameters"]["algorithm"]
    grid = "x".join(map(str, (r.get("partition") or {}).get("grid") or [1, 1]))
    label = label or f"{name} {grid}: the workflow's command from a shell"
    print(f"| {label} | {r['measurements']['hmean_teps'] / 1e9:.2f} | "
          f"{bench.get((name, grid), float('nan')) / 1e9:.2f} | {r['valid']} |")
print("| run (workflow) | workflow GTEPS | bfs bench GTEPS, same call | valid |")
print("|---|---|---|---|")
for rj in sorted((work / "results/runs").glob("*/*/*/run.json")):
    row(rj.parent.relative_to(work / "results/runs"), rj)
if (out / "shell-run" / "run.json").is_file():
    row(None, out / "shell-run" / "run.json")
PY
