#!/usr/bin/env bash
# The largest graph one GPU holds, in one call (nvidia-h100-x1 or one card of a bigger kind):
#   tests        the GPU tests of the streamed edge list, Kernel 1 and the runs from --generate;
#                the energy test on the board's NVML counter
#   stream S     merrill-do at scale S with the edge list on the device, then streamed (its
#                Kernel 1 regenerates the edges per pass): Kernel 1 seconds and GTEPS, same call
#   big S...     merrill-do per scale with --edge-list auto (streamed where the list does not
#                fit), every search validated; the memory peak per directed edge from run.json
#   fill S       Kernel 1's fill variants in one process (bench/kernel1_fill.py)
# ROOTS roots (default 16); logs under $OUT (default bench/results/largest). Run directories
# under /tmp are overwritten (--force): a warm machine keeps the last call's.
set -euo pipefail
cd "$(dirname "$0")/.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
OUT=${OUT:-bench/results/largest}
ROOTS=${ROOTS:-16}
mkdir -p "$OUT"
stage=${1:-tests}
shift || true
summary() {   # run.json's figures: Kernel 1, GTEPS, edge list, memory
  python3 - "$1" <<'PY'
import json, sys
info = json.load(open(sys.argv[1] + "/run.json"))
m = info["measurements"]
peak = max(p["pool"] for p in m["device_memory_peak_bytes"])
print(f"K1 {info['construction_time']:.3f} s, hmean {m['hmean_teps'] / 1e9:.2f} GTEPS, "
      f"median {m['median_time_s'] * 1e3:.3f} ms, validated {m['n_validated']}, valid "
      f"{info['valid']}, edge list {m.get('edge_list')}, peak {peak / 2**30:.2f} GiB "
      f"({m['device_bytes_per_directed_edge']:.2f} B per directed edge)")
PY
}
case "$stage" in
  tests)
    rc=0
    python3 -m pytest -q -m gpu tests/test_gpu.py \
      -k "${GPU_TESTS:-streamed or kernel1 or run_generate or out_of_memory}" \
      > "$OUT/tests-gpu.log" 2>&1 || rc=1
    tail -4 "$OUT/tests-gpu.log"
    # energy per search on a real board counter (skipped without nvidia-ml-py)
    python3 -m pytest -q -m gpu tests/test_energy.py -rs > "$OUT/tests-energy.log" 2>&1 || rc=1
    tail -4 "$OUT/tests-energy.log"
    exit $rc
    ;;
  stream)
    for s in "$@"; do
      for mode in device stream; do
        python3 -m bfs run --generate "kronecker:scale=$s" --algorithm merrill-do \
          --backend gpu --roots "$ROOTS" --edge-list "$mode" --out "/tmp/largest-$s-$mode" \
          --force > "$OUT/s$s-$mode.log" 2>&1 \
          || { echo "s$s --edge-list $mode failed:"; tail -5 "$OUT/s$s-$mode.log"; continue; }
        echo "s$s merrill-do --edge-list $mode: $(summary "/tmp/largest-$s-$mode")"
      done
    done
    ;;
  big)
    for s in "$@"; do
      python3 -m bfs run --generate "kronecker:scale=$s" --algorithm merrill-do --backend gpu \
        --roots "$ROOTS" --out "/tmp/largest-$s" --force > "$OUT/s$s-auto.log" 2>&1 \
        || { echo "s$s failed:"; tail -5 "$OUT/s$s-auto.log"; continue; }
      echo "s$s merrill-do --edge-list auto: $(summary "/tmp/largest-$s")"
      cp "/tmp/largest-$s/run.json" "$OUT/s$s-run.json"
    done
    ;;
  fill)
    PYTHONPATH=. python3 bench/kernel1_fill.py "$1" "${ROUNDS:-3}" 2>&1 | tee "$OUT/fill-s$1.log" | grep scale
    ;;
  *) echo "usage: $0 tests | stream S... | big S... | fill S" >&2; exit 2 ;;
esac
