#!/bin/bash
# One device call for the 2d GPU work: tests, a quick bench, scale 28. Logs under $OUT.
# usage: bench/device_2d.sh [tests] [quick] [s28] [full]
set -o pipefail
OUT=${OUT:-/tmp/out}
for step in "$@"; do
  t0=$(date +%s)
  case $step in
    tests) timeout 200 python3 -m pytest -q -x -m gpu tests/test_gpu.py -k "2d" \
             2>&1 | tee $OUT/tests.log | tail -5 ;;
    quick) timeout 120 python3 -m bfs bench --backend gpu --scales 22 --algorithms merrill,2d \
             --roots 8 --validate first --profile-levels --out $OUT/quick.json 2>&1 | tee $OUT/quick.log | tail -6 ;;
    s28) timeout 230 python3 -m bfs bench --backend gpu --scales 28 --algorithms merrill-do \
             --roots 8 --validate none --out $OUT/s28.json 2>&1 | tee $OUT/s28.log | tail -8 ;;
    full) timeout 450 python3 -m bfs bench --backend gpu --scales 25 26 --algorithms merrill,2d \
             --roots 64 --validate first --out $OUT/full.json 2>&1 | tee $OUT/full.log | tail -8 ;;
  esac
  echo "== step $step rc=$? $(( $(date +%s) - t0 )) s" | tee -a $OUT/steps.log
done
cat $OUT/steps.log
