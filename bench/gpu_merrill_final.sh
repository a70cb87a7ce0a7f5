#!/usr/bin/env bash
# One device call: merrill and merrill-do at scales 25 and 26 (64 roots, first search validated,
# level profiles), a 2000 x 2000 grid, then the GPU tests.   OUT=dir bash bench/gpu_merrill_final.sh
set -o pipefail
OUT=${OUT:-gpu-final-out}
mkdir -p "$OUT"
export PYTHONPATH=.${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
status=0
nvidia-smi --query-gpu=name,memory.total,memory.used,clocks.sm,driver_version --format=csv > "$OUT/gpu.txt" 2>&1
python3 -m bfs bench --backend gpu --scales 25 26 --algorithms merrill merrill-do --roots 64 \
    --validate first --profile-levels --out "$OUT/bench.json" > "$OUT/bench.log" 2>&1 || status=1
python3 -m bfs bench --backend gpu --grid 2000x2000 --algorithms merrill merrill-do --roots 4 \
    --validate first --profile-levels --out "$OUT/bench-grid.json" > "$OUT/bench-grid.log" 2>&1 || status=1
python3 -m pytest -q -m gpu tests/test_gpu.py > "$OUT/gpu-tests.log" 2>&1 || status=1
grep -E "level profile|depth" "$OUT/bench.log" | grep -v "  depth  *[0-9]* small" | head -30
grep -E "level profile|by_kind" "$OUT/bench-grid.log"
tail -7 "$OUT/bench.log"; tail -4 "$OUT/bench-grid.log"
grep -E "passed|failed|error" "$OUT/gpu-tests.log" | tail -15
exit $status
