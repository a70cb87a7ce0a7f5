#!/usr/bin/env bash
# A stage of bench/device.sh (which sets the environment every stage shares: multicast off,
# mpiexec as root, PYTHONPATH, $OUT/gpu.txt); run it as `bash bench/device.sh STAGE ...`.
# The GPU table of BENCHMARKS.md in two device calls (each under 10 minutes):
#   OUT=dir bash bench/device.sh one-gpu kronecker   # GPU tests, then scales 25 and 26
#   OUT=dir bash bench/device.sh one-gpu others      # lattice, SNAP graphs, scale 28 (scale 28:
#     nvidia-h200; on an 80 GB H100 its edge list and Kernel 1 no longer fit together since bench
#     runs through the harness, which has no streamed Kernel 1 yet)
#   OUT=dir bash bench/device.sh one-gpu run         # scale 25 through disk: bfs generate + bfs run
# Every search is validated on the GPU (bench's default --validate every).
set -o pipefail
status=0
case "${1:-kronecker}" in
kronecker)
    # shellcheck disable=SC2086  # GPU_TEST_FILES (bench/device.sh): a list of files
    python3 -m pytest -q -m gpu $GPU_TEST_FILES -p no:cacheprovider > "$OUT/gpu-tests.log" 2>&1 || status=1
    grep -E "passed|failed|error" "$OUT/gpu-tests.log" | tail -5
    python3 -m bfs bench --backend gpu --scales 25 26 --algorithms merrill,2d,merrill-do --roots 64 \
        --profile-levels --out "$OUT/kronecker.json" > "$OUT/kronecker.log" 2>&1 || status=1
    tail -9 "$OUT/kronecker.log"
    ;;
others)
    for f in email-Eu-core p2p-Gnutella09; do
        python3 -m bfs generate snap "data/snap/$f.txt" --out "/tmp/$f" --force > /dev/null 2>&1 || status=1
    done
    python3 -m bfs bench --backend gpu --lattice-graphs 2000x2000 --graphs /tmp/email-Eu-core /tmp/p2p-Gnutella09 \
        --algorithms merrill,2d,merrill-do --roots 8 --profile-levels --out "$OUT/others.json" \
        > "$OUT/others.log" 2>&1 || status=1
    tail -11 "$OUT/others.log"
    python3 -m bfs bench --backend gpu --scales 28 --algorithms merrill,merrill-do --roots 8 \
        --out "$OUT/scale28.json" > "$OUT/scale28.log" 2>&1 || status=1
    tail -5 "$OUT/scale28.log"
    ;;
run)
    # the product path: a graph directory on disk, read by row groups into device memory
    ( time python3 -m bfs generate kronecker --scale 25 --backend gpu --out /tmp/kron25 --force ) \
        > "$OUT/run-generate.log" 2>&1 || status=1
    tail -4 "$OUT/run-generate.log"
    for a in merrill merrill-do; do
        python3 -m bfs run /tmp/kron25 --algorithm $a --backend gpu --roots 16 --out /tmp/run-$a \
            --force > "$OUT/run-$a.log" 2>&1 || status=1
        grep -E "GPU memory|edge list on|kernel 1|search 16/16|harmonic_mean_TEPS|construction_time" "$OUT/run-$a.log"
        cp /tmp/run-$a/run.json "$OUT/run-$a.json"
    done
    ;;
esac
exit $status
