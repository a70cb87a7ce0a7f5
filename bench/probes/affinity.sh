#!/usr/bin/env bash
# Probe: does a four-GPU run's launch-to-launch spread (six launches of one 2d-do 1x4 command
# on one host: 730.7-942.1 GTEPS, BENCHMARKS.md "Both strong-scaling experiments whole") come
# from where the ranks' host threads run? The host's topology first (nvidia-smi topo -m, the
# NUMA nodes), then the same run alternated: as mpiexec binds it (BFS_CPU_AFFINITY unset), and
# unbound with each rank on its GPU's NUMA node (--bind-to none, BFS_CPU_AFFINITY=gpu); each
# run's ranks' cores and their GPUs' nodes from run.json. In bench/device.sh's environment
# (multicast off, PYTHONPATH=.:bench, mpiexec as root):
#   OUT=dir S=26 ROOTS=16 GPUS=4 ROUNDS=2 bash bench/probes/affinity.sh
set -euo pipefail
S=${S:-26} ROOTS=${ROOTS:-16} GPUS=${GPUS:-4} ROUNDS=${ROUNDS:-2}
WORK=${WORK:-/tmp/bfs-affinity}; rm -rf "$WORK"; mkdir -p "$WORK"
{ nvidia-smi topo -m; lscpu | grep -i numa; } > "$OUT/topology.txt" 2>&1 || true
cmd=(python3 -m bfs run
     --generate "kronecker:scale=$S,edgefactor=16,seeds=2:3,version=3.0,name=kron-s$S"
     --grid "1x$GPUS" --algorithm 2d-do --backend gpu --exchange scan --comm nccl
     --roots "$ROOTS" --save-parents 0)
one() {  # label, then mpiexec's options
  local label=$1; shift
  mpiexec -n "$GPUS" "$@" "${cmd[@]}" --out "$WORK/$label" 2> "$OUT/$label.log"
  python3 - "$WORK/$label/run.json" "$label" <<'PY' | tee -a "$OUT/affinity.md"
import json, sys
r = json.load(open(sys.argv[1]))
m, ranks = r["measurements"], r["environment"]["ranks"]
where = "; ".join(f"{k['cpus']} (GPU {k.get('gpu_index')}: {k.get('gpu_numa_cpus')})"
                  for k in ranks)
print(f"| {sys.argv[2]} | {m['hmean_teps'] / 1e9:.1f} | {r['valid']} | {where} |")
PY
}
for round in $(seq "$ROUNDS"); do
  one "as-bound-$round"
  BFS_CPU_AFFINITY=gpu one "gpu-node-$round" --bind-to none
done
BFS_CPU_AFFINITY=gpu one "gpu-node-as-bound"
