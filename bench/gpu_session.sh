#!/usr/bin/env bash
# One GPU session from the repository root: the GPU tests, then the benchmark.
#   OUT=/some/dir bash bench/gpu_session.sh        (OUT defaults to ./gpu-session-out)
# Logs and bench.json land in $OUT. Scale 20 validates every search; scales 25 and 26 validate
# the first search per algorithm (CPU validation of a 2^30-edge graph takes seconds per search,
# 64 of them would dominate the session); pass VALIDATE=every to validate all of them.
set -o pipefail
OUT=${OUT:-gpu-session-out}
VALIDATE=${VALIDATE:-first}
SCALES=${SCALES:-"25 26"}
mkdir -p "$OUT"
export PYTHONPATH=.${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version --format=csv 2>&1 | tee "$OUT/gpu.txt"
python3 -c 'import cupy, numpy, numba; print("cupy", cupy.__version__, "numpy", numpy.__version__, "numba", numba.__version__)' 2>&1 | tee -a "$OUT/gpu.txt"
status=0
python3 -m pytest -q -m gpu tests/test_gpu.py 2>&1 | tee "$OUT/gpu-tests.log" || status=1
python3 -m bfs bench --backend gpu --scales 20 --algorithms merrill merrill-do --roots 64 --validate every \
    --out "$OUT/bench-s20.json" 2>&1 | tee "$OUT/bench-s20.log" || status=1
python3 -m bfs bench --backend gpu --scales $SCALES --algorithms merrill merrill-do --roots 64 \
    --validate "$VALIDATE" --out "$OUT/bench.json" 2>&1 | tee "$OUT/bench.log" || status=1
exit $status
