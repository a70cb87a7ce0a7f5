#!/usr/bin/env bash
# The COST check on one GPU (nvidia-h100-x1 or nvidia-h200): the distributed searches on a 1x1
# grid against the single-GPU searches they must match, same machine, same call.
#   tests        the one-GPU tests of the shared engine (2d / 2d-do / 1d on 1x1 and on 1x2, 2x1,
#                2x2 grids of ranks sharing the GPU) and of merrill / merrill-do
#   bench S...   per scale: `bfs bench` merrill-do,merrill, then `mpiexec -n 1 bfs bench --grid
#                1x1` 2d-do,2d (ROOTS roots, default 64, every search validated); the table of
#                ratios last (bench/cost_table.py)
# JSON and logs go to $OUT (default bench/results/cost).
set -euo pipefail
cd "$(dirname "$0")/.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
OUT=${OUT:-bench/results/cost}
mkdir -p "$OUT"
stage=${1:-tests}
shift || true
case "$stage" in
  tests)
    python3 -m pytest -q -m gpu tests/test_gpu.py ${TESTS:+-k "$TESTS"} 2>&1 | tee "$OUT/tests.log"
    ;;
  bench)
    roots=${ROOTS:-64}
    for scale in "$@"; do
      python3 -m bfs bench --backend gpu --scales "$scale" --algorithms merrill-do,merrill \
        --roots "$roots" --out "$OUT/s$scale-single.json" 2> "$OUT/s$scale-single.log"
      mpiexec -n 1 python3 -m bfs bench --backend gpu --grid 1x1 --scales "$scale" \
        --algorithms 2d-do,2d --roots "$roots" --out "$OUT/s$scale-1x1.json" \
        2> "$OUT/s$scale-1x1.log"
    done
    python3 bench/cost_table.py "$OUT"/s*-single.json
    ;;
  *) echo "usage: $0 tests | bench SCALE..." >&2; exit 2 ;;
esac
