#!/usr/bin/env bash
# A stage of bench/device.sh (which sets the environment every stage shares: multicast off,
# mpiexec as root, PYTHONPATH, $OUT/gpu.txt); run it as `bash bench/device.sh STAGE ...`.
# The distributed GPU searches on a device machine:
#   tests        the GPU tests (one and two GPUs; TESTS="EXPR" selects with pytest -k)
#   bench S...   (nvidia-h200-x2 or bigger) 2d on 1x1, 1x2 and 2x1 grids at the given scales, 64
#                roots, every search validated on the GPUs, scan / wave and nccl / mpi side by
#                side; ALGORITHMS, GRIDS and ROOTS override the defaults
#   cost S...    (one GPU) the COST check: per scale, `bfs bench` merrill-do,merrill, then
#                `mpiexec -n 1 bfs bench --grid 1x1` 2d-do,2d, back to back in one call (ROOTS
#                roots, default 64, every search validated), and bench/cost_table.py's ratios
# JSON and logs go to $OUT (default bench/results/grid).
set -euo pipefail
# NVLink multicast off wherever NCCL starts (the device's rule); Open MPI as root in containers
stage=${1:-tests}
shift || true
case "$stage" in
  tests)
    # shellcheck disable=SC2086  # GPU_TEST_FILES (bench/device.sh): a list of files
    python3 -m pytest -q -m gpu tests/test_gpu_grid.py $GPU_TEST_FILES ${TESTS:+-k "$TESTS"} \
      2>&1 | tee "$OUT/tests.log"
    ;;
  cost)
    for scale in "$@"; do
      python3 -m bfs bench --backend gpu --scales "$scale" --algorithms merrill-do,merrill \
        --roots "${ROOTS:-64}" --out "$OUT/s$scale-single.json" 2> "$OUT/s$scale-single.log"
      mpiexec -n 1 python3 -m bfs bench --backend gpu --grid 1x1 --scales "$scale" \
        --algorithms 2d-do,2d --roots "${ROOTS:-64}" --out "$OUT/s$scale-1x1.json" \
        2> "$OUT/s$scale-1x1.log"
    done
    python3 bench/cost_table.py "$OUT"/s*-single.json
    ;;
  bench)
    roots=${ROOTS:-64}
    algorithms=${ALGORITHMS:-2d,2d@exchange=wave,2d@comm=mpi}
    for scale in "$@"; do
      for grid in ${GRIDS:-1x1 1x2 2x1}; do
        n=$(( ${grid%x*} * ${grid#*x} ))
        mpiexec -n "$n" python3 -m bfs bench --backend gpu --grid "$grid" --scales "$scale" \
          --algorithms "$algorithms" --roots "$roots" --out "$OUT/s$scale-$grid.json" \
          2> "$OUT/s$scale-$grid.log"
      done
    done
    ;;
  *) echo "usage: $0 tests | bench SCALE... | cost SCALE..." >&2; exit 2 ;;
esac
