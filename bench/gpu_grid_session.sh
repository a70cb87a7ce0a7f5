#!/usr/bin/env bash
# The multi-GPU session (nvidia-h200-x2 or bigger): `tests` runs the GPU tests (one and two
# GPUs); `bench S...` runs 2d on 1x1, 1x2 and 2x1 grids at the given scales, 64 roots, every
# search validated on the GPUs, scan / wave and nccl / mpi side by side. JSON and logs go to
# $OUT (default bench/results/grid). ALGORITHMS, GRIDS and ROOTS override the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
# NVLink multicast off wherever NCCL starts (the device's rule); Open MPI as root in containers
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
OUT=${OUT:-bench/results/grid}
mkdir -p "$OUT"
stage=${1:-tests}
shift || true
case "$stage" in
  tests)
    python3 -m pytest -q -m gpu tests/test_gpu_grid.py tests/test_gpu.py -x 2>&1 | tee "$OUT/tests.log"
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
  *) echo "usage: $0 tests | bench SCALE..." >&2; exit 2 ;;
esac
