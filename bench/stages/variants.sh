#!/usr/bin/env bash
# A stage of bench/device.sh (which sets the environment every stage shares: multicast off,
# mpiexec as root, PYTHONPATH, $OUT/gpu.txt); run it as `bash bench/device.sh STAGE ...`.
# One device call: merrill variants side by side (scale 20 validated every search, scale 25
# first search per variant, level profiles), a road-like grid, then the GPU tests.
#   OUT=dir bash bench/device.sh variants
set -o pipefail
ROOTS=${ROOTS:-16}
SCALES=${SCALES:-25}
VARIANTS=${VARIANTS:-"merrill@expand=v0 merrill@expand=tiles-cas merrill merrill-do"}
GRID=${GRID:-2000x2000}
status=0
python3 -m bfs bench --backend gpu --scales 20 --algorithms $VARIANTS --roots 8 \
    --validate every --out "$OUT/bench-s20.json" > "$OUT/bench-s20.log" 2>&1 || status=1
tail -8 "$OUT/bench-s20.log"
python3 -m bfs bench --backend gpu --scales $SCALES --algorithms $VARIANTS --roots $ROOTS \
    --validate first --profile-levels --out "$OUT/bench.json" > "$OUT/bench.log" 2>&1 || status=1
grep -E "level profile|depth" "$OUT/bench.log" | head -60
tail -8 "$OUT/bench.log"
if [ -n "$GRID" ]; then
python3 -m bfs bench --backend gpu --lattice-graphs $GRID --algorithms merrill merrill-do --roots 4 \
    --validate first --profile-levels --out "$OUT/bench-grid.json" > "$OUT/bench-grid.log" 2>&1 || status=1
grep -E "level profile" "$OUT/bench-grid.log"
tail -5 "$OUT/bench-grid.log"
fi
exit $status
