#!/usr/bin/env bash
# A stage of bench/device.sh (which sets the environment every stage shares: multicast off,
# mpiexec as root, PYTHONPATH, $OUT/gpu.txt); run it as `bash bench/device.sh STAGE ...`.
# The largest graph one GPU holds, in one call (nvidia-h100-x1 or one card of a bigger kind):
#   tests        the GPU tests of the streamed edge list, Kernel 1 and the runs from --generate;
#                the energy test on the board's NVML counter
#   stream S     merrill-do at scale S with the edge list on the device, then streamed (its
#                Kernel 1 regenerates the edges per pass): Kernel 1 seconds and GTEPS, same call
#   big S...     merrill-do per scale with --edge-list auto (streamed where the list does not
#                fit), every search validated; the memory peak per directed edge from run.json
#   graphdir S   a scale-S graph directory generated on the GPU (kept by a warm machine: a later
#                call reuses it, verified), then `bfs run GRAPH_DIR` with merrill-do (the list
#                streamed from its row groups): the host's memory peak (run.json) against the
#                CSR's bytes, and each step's wall seconds
#   fill S       Kernel 1's fill variants in one process (bench/probes/kernel1_fill.py)
#   compare S    issue 36's targets: merrill-do twice and merrill-do@tail=0 once by `bfs run`
#                (energy window on), the same once with --energy-window 0 (the wall seconds the
#                window adds), `bfs compare` of the pairs, and bench/ab_roots.py on the variants
# ROOTS roots (default 16); logs under $OUT (default bench/results/largest). Run directories
# under /tmp are overwritten (--force): a warm machine keeps the last call's.
set -euo pipefail
ROOTS=${ROOTS:-16}
stage=${1:-tests}
shift || true
summary() {   # run.json's figures: Kernel 1, GTEPS, edge list, memory
  python3 - "$1" <<'PY'
import json, sys
info = json.load(open(sys.argv[1] + "/run.json"))
m = info["measurements"]
top = max(m["device_memory_peak_bytes"], key=lambda p: p["pool"])
peak = top["pool"]
print(f"K1 {info['construction_time']:.3f} s, hmean {m['hmean_teps'] / 1e9:.2f} GTEPS, "
      f"median {m['median_time_s'] * 1e3:.3f} ms, validated {m['n_validated']}, valid "
      f"{info['valid']}, edge list {m.get('edge_list')}, peak {peak / 2**30:.2f} GiB "
      f"({m['device_bytes_per_directed_edge']:.2f} B per directed edge; in use "
      f"{top.get('in_use', 0) / 2**30:.2f} GiB at {top.get('stage')})")
PY
}
case "$stage" in
  tests)
    rc=0
    # shellcheck disable=SC2086  # GPU_TEST_FILES (bench/device.sh): a list of files
    python3 -m pytest -q -m gpu $GPU_TEST_FILES \
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
  graphdir)
    s=$1
    t0=$(date +%s)
    if python3 -m bfs verify "/tmp/graph-s$s" > /dev/null 2>&1; then
      echo "s$s: the graph directory a warm machine kept (/tmp/graph-s$s, verified)"
    else
      python3 -m bfs generate kronecker --scale "$s" --backend gpu --out "/tmp/graph-s$s" \
        --force > "$OUT/graphdir-s$s-generate.log" 2>&1 \
        || { echo "generate s$s failed:"; tail -5 "$OUT/graphdir-s$s-generate.log"; exit 1; }
      echo "generated s$s in $(( $(date +%s) - t0 )) s: $(du -sh "/tmp/graph-s$s" | cut -f1)"
    fi
    t1=$(date +%s)
    python3 -m bfs run "/tmp/graph-s$s" --algorithm merrill-do --backend gpu --roots "$ROOTS" \
      --out "/tmp/graphdir-run-s$s" --force > "$OUT/graphdir-s$s-run.log" 2>&1 \
      || { echo "run s$s failed:"; tail -5 "$OUT/graphdir-s$s-run.log"; exit 1; }
    t2=$(date +%s)
    echo "bfs run GRAPH_DIR s$s in $((t2 - t1)) s: $(summary "/tmp/graphdir-run-s$s")"
    python3 - "/tmp/graphdir-run-s$s" "$s" <<'PY'
import json, sys
info = json.load(open(sys.argv[1] + "/run.json"))
n, m = 2 ** int(sys.argv[2]), 16 * 2 ** int(sys.argv[2])
csr = 4 * 2 * m + 8 * (n + 1)          # uint32 columns of both directions, int64 offsets
host = max(info["measurements"]["host_memory_peak_bytes"])
print(f"host peak {host / 2**30:.2f} GiB = {host / csr:.2f}x the CSR's {csr / 2**30:.2f} GiB")
PY
    cp "/tmp/graphdir-run-s$s/run.json" "$OUT/graphdir-s$s-run.json"
    ;;
  fill)
    PYTHONPATH=. python3 bench/probes/kernel1_fill.py "$1" "${ROUNDS:-3}" 2>&1 | tee "$OUT/fill-s$1.log" | grep scale
    ;;
  compare)
    s=$1
    wall() {   # NAME ARGS...: bfs run, its wall seconds
      local t0 t1 name=$1; shift
      t0=$(date +%s.%N)
      python3 -m bfs run --generate "kronecker:scale=$s" --backend gpu --roots "$ROOTS" \
        --out "/tmp/cmp-$name" --force "$@" > "$OUT/cmp-$name.log" 2>&1 \
        || { echo "$name failed:"; tail -5 "$OUT/cmp-$name.log"; return 1; }
      t1=$(date +%s.%N)
      python3 - "/tmp/cmp-$name" "$name" "$t0" "$t1" <<'PY'
import json, sys
info = json.load(open(sys.argv[1] + "/run.json"))
e, m = info.get("energy"), info["measurements"]
wall = float(sys.argv[4]) - float(sys.argv[3])
print(f"{sys.argv[2]}: wall {wall:.1f} s, {m['hmean_teps'] / 1e9:.2f} GTEPS, valid {info['valid']}"
      + (f", {e['watts']:.0f} W, {e['teps_per_watt'] / 1e6:.1f} MTEPS/W over {e['seconds']:.2f} s"
         if e else ", no energy window"))
PY
    }
    wall a1 --algorithm merrill-do
    wall a2 --algorithm merrill-do
    wall nowin --algorithm merrill-do --energy-window 0
    wall b --algorithm merrill-do@tail=0
    for pair in "a1 a2" "a1 b"; do
      set -- $pair
      python3 -m bfs compare "/tmp/cmp-$1" "/tmp/cmp-$2" --out "/tmp/cmp-$1-$2" --force \
        > "$OUT/compare-$1-$2.log" 2>&1 || { tail -5 "$OUT/compare-$1-$2.log"; exit 1; }
      echo "compare $1 $2:"; cat "/tmp/cmp-$1-$2/summary.md"
    done
    PYTHONPATH=. python3 bench/ab_roots.py "$s" "$ROOTS" merrill-do merrill-do@tail=0 \
      > "$OUT/ab-roots.log" 2>&1 || { tail -5 "$OUT/ab-roots.log"; exit 1; }
    tail -6 "$OUT/ab-roots.log"
    ;;
  *) echo "usage: $0 tests | stream S... | big S... | graphdir S | fill S | compare S" >&2; exit 2 ;;
esac
