#!/usr/bin/env bash
# A stage of bench/device.sh (which sets the environment every stage shares: multicast off,
# mpiexec as root, PYTHONPATH, $OUT/gpu.txt); run it as `bash bench/device.sh STAGE ...`.
# Two GPUs against one, in one call on a two-GPU machine (nvidia-h100-x2):
#   check        the grid GPU tests of 2d-do (two GPUs, and grids of ranks sharing one)
#   push S...    per scale: merrill-do on one GPU (bfs run, the COST baseline), then 2d-do
#                (with its variants: ALGORITHMS) on 1x2 and 2x1 through bfs bench, and the
#                first search's level steps on 1x2 (bfs run logs them); ROOTS roots (64)
#   proxy S...   the one-GPU proxy: 2d-do@engine=0 (the grid's level loop on one rank)
#                beside 2d-do (merrill-do itself) and 2d (merrill itself, 2d's and 1d's
#                one-GPU figure) in one bench process
#   big S        2d-do on 1x2 at a scale past 2^31 block entries (27): runs and validates
#   pair S       two settings of 2d-do, A and B (default graphs=0 and graphs=1: chains
#                launched one by one or replayed as CUDA graphs), interleaved twice in one bench
#                process on 1x2 beside merrill-do (rank 0, the COST baseline), then once each
#                on 2x1; ROOTS roots; Kernel 1's phases from the logs
#   energy S     merrill-do on one GPU and 2d-do on 1x2, bfs run with the energy window, twice
#                each: GTEPS, watts and MTEPS/W from run.json
#   grids S...   (two or more GPUs) per scale: merrill-do on one GPU, then 2d-do (ALGORITHMS) on
#                each grid of GRIDS (default "1x2 1x4 2x2": one rank per GPU) through bfs bench,
#                ROOTS roots, and the first search's level steps on the last grid
#   largest S ALG...  the largest graph two GPUs hold: each ALG (default 2d-do) on 1x2 (1d on
#                2x1) at scale S through bfs run (--edge-list auto: the blocks routed a chunk
#                at a time where they do not fit whole), every search validated; Kernel 1,
#                GTEPS, each rank's peak and bytes per directed entry. BASELINE=1 runs
#                merrill-do on one GPU at S first (it fits up to 28)
# WITH_1D=1 adds 1d on 2x1 to push.
# Logs and JSON go to $OUT (default bench/results/two-gpus).
set -euo pipefail
ROOTS=${ROOTS:-64}
stage=${1:-check}
shift || true
hmean() { grep -E "harmonic_mean_TEPS|construction_time" "$1" | tr -s ' ' | tr '\n' ' '; echo; }
case "$stage" in
  check)
    rc=0
    python3 -m pytest -q -m gpu tests/test_gpu_grid.py ${TESTS:+-k "$TESTS"} \
      > "$OUT/tests-grid.log" 2>&1 || rc=1
    tail -4 "$OUT/tests-grid.log"
    # shellcheck disable=SC2086  # GPU_TEST_FILES (bench/device.sh): a list of files
    python3 -m pytest -q -m gpu $GPU_TEST_FILES -k "${GPU_TESTS:-2d or one_rank or run_generate}" \
      > "$OUT/tests-gpu.log" 2>&1 || rc=1
    tail -4 "$OUT/tests-gpu.log"
    exit $rc
    ;;
  push)
    for s in "$@"; do
      python3 -m bfs run --generate "kronecker:scale=$s" --algorithm merrill-do --backend gpu \
        --roots "$ROOTS" --validate every --out "/tmp/two-m$s" > "$OUT/s$s-merrill-do.log" 2>&1
      echo "s$s merrill-do 1 GPU: $(hmean "$OUT/s$s-merrill-do.log")"
      for grid in 1x2 2x1; do
        algorithms=${ALGORITHMS:-2d-do,2d}
        [ "$grid" = 2x1 ] && algorithms="$algorithms${WITH_1D:+,1d}"
        mpiexec -n 2 python3 -m bfs bench --backend gpu --grid "$grid" --scales "$s" \
          --algorithms "$algorithms" --roots "$ROOTS" --out "$OUT/s$s-$grid.json" \
          > "$OUT/s$s-$grid.txt" 2> "$OUT/s$s-$grid.log"
        echo "s$s $grid:"; cat "$OUT/s$s-$grid.txt"
      done
      mpiexec -n 2 python3 -m bfs run --generate "kronecker:scale=$s" --algorithm 2d-do \
        --backend gpu --grid 1x2 --roots 4 --validate every --out "/tmp/two-l$s" \
        > "$OUT/s$s-levels.log" 2>&1
      grep "level" "$OUT/s$s-levels.log" | head -12
    done
    ;;
  proxy)
    for s in "$@"; do
      mpiexec -n 1 python3 -m bfs bench --backend gpu --grid 1x1 --scales "$s" \
        --algorithms "${PROXY:-2d-do,2d-do@engine=0,2d}" --roots "$ROOTS" \
        --out "$OUT/s$s-proxy.json" \
        > "$OUT/s$s-proxy.txt" 2> "$OUT/s$s-proxy.log"
      echo "s$s proxy:"; cat "$OUT/s$s-proxy.txt"
    done
    ;;
  grids)
    for s in "$@"; do
      python3 -m bfs run --generate "kronecker:scale=$s" --algorithm merrill-do --backend gpu \
        --roots "$ROOTS" --validate every --out "/tmp/grids-m$s" > "$OUT/s$s-merrill-do.log" 2>&1
      echo "s$s merrill-do 1 GPU: $(hmean "$OUT/s$s-merrill-do.log")"
      for grid in ${GRIDS:-1x2 1x4 2x2}; do
        n=$(( ${grid%x*} * ${grid#*x} ))
        mpiexec -n "$n" python3 -m bfs bench --backend gpu --grid "$grid" --scales "$s" \
          --algorithms "${ALGORITHMS:-2d-do}" --roots "$ROOTS" --out "$OUT/s$s-$grid.json" \
          > "$OUT/s$s-$grid.txt" 2> "$OUT/s$s-$grid.log" \
          || { echo "s$s $grid failed:"; tail -8 "$OUT/s$s-$grid.log"; continue; }
        echo "s$s $grid:"; cat "$OUT/s$s-$grid.txt"
      done
      mpiexec -n "$n" python3 -m bfs run --generate "kronecker:scale=$s" --algorithm 2d-do \
        --backend gpu --grid "$grid" --roots 4 --validate every --out "/tmp/grids-l$s" \
        > "$OUT/s$s-levels-$grid.log" 2>&1 || true
      grep "level" "$OUT/s$s-levels-$grid.log" | head -12
    done
    ;;
  big)
    mpiexec -n 2 python3 -m bfs bench --backend gpu --grid 1x2 --scales "$1" --algorithms 2d-do \
      --roots "$ROOTS" --out "$OUT/s$1-big.json" > "$OUT/s$1-big.txt" 2> "$OUT/s$1-big.log" \
      || { tail -30 "$OUT/s$1-big.log"; exit 1; }
    echo "s$1 1x2:"; cat "$OUT/s$1-big.txt"
    ;;
  largest)
    s=$1; shift
    runs=()
    if [ -n "${BASELINE:-}" ]; then
      python3 -m bfs run --generate "kronecker:scale=$s" --algorithm merrill-do --backend gpu \
        --roots "$ROOTS" --out "/tmp/largest-m$s" --force > "$OUT/s$s-merrill-do.log" 2>&1 \
        && runs+=("/tmp/largest-m$s") || { echo "s$s merrill-do failed:"; tail -5 "$OUT/s$s-merrill-do.log"; }
    fi
    for alg in "${@:-2d-do}"; do
      grid=1x2; [ "$alg" = 1d ] && grid=2x1
      mpiexec -n 2 python3 -m bfs run --generate "kronecker:scale=$s" --algorithm "$alg" \
        --backend gpu --grid "$grid" --roots "$ROOTS" --out "/tmp/largest-$alg$s" --force \
        > "$OUT/s$s-$alg-$grid.log" 2>&1 \
        && runs+=("/tmp/largest-$alg$s") || { echo "s$s $alg $grid failed:"; tail -8 "$OUT/s$s-$alg-$grid.log"; }
    done
    for run in "${runs[@]}"; do
      cp "$run/run.json" "$OUT/$(basename "$run")-run.json"
      python3 - "$run" <<'PY'
import json, sys
info = json.load(open(sys.argv[1] + "/run.json"))
m, p = info["measurements"], info["parameters"]
peaks = ", ".join(f"{r['pool'] / 2**30:.2f}" for r in m["device_memory_peak_bytes"])
print(f"s{info['graph']['scale']} {p['algorithm']} on {p.get('mpi_size', 1)} GPU(s): "
      f"K1 {info['construction_time']:.3f} s, {m['hmean_teps'] / 1e9:.2f} GTEPS (hm), "
      f"validated {m['n_validated']}, valid {info['valid']}, peak GiB a rank [{peaks}] "
      f"({m['device_bytes_per_directed_edge']:.2f} B per directed edge), placement "
      f"{(m.get('placement') or {}).get('edge_list', m.get('edge_list'))}")
PY
    done
    ;;
  pair)
    # "ahead=4" (the default) names the repeats apart: a bench runs each variant once
    a=2d-do@${A:-graphs=0} b=2d-do@${B:-graphs=1}
    mpiexec -n 2 python3 -m bfs bench --backend gpu --grid 1x2 --scales "$1" --roots "$ROOTS" \
      --algorithms "merrill-do,$a,$b,$a,ahead=4,$b,ahead=4" \
      --out "$OUT/s$1-1x2.json" > "$OUT/s$1-1x2.txt" 2> "$OUT/s$1-1x2.log"
    cat "$OUT/s$1-1x2.txt"
    mpiexec -n 2 python3 -m bfs bench --backend gpu --grid 2x1 --scales "$1" --roots "$ROOTS" \
      --algorithms "$a,$b" \
      --out "$OUT/s$1-2x1.json" > "$OUT/s$1-2x1.txt" 2> "$OUT/s$1-2x1.log"
    cat "$OUT/s$1-2x1.txt"
    grep -h "kernel 1" "$OUT/s$1-1x2.log" "$OUT/s$1-2x1.log"
    ;;
  energy)
    for rep in 1 2; do
      python3 -m bfs run --generate "kronecker:scale=$1" --algorithm merrill-do --backend gpu \
        --roots "$ROOTS" --out "/tmp/energy-m$rep" --force > "$OUT/s$1-energy-m$rep.log" 2>&1
      mpiexec -n 2 python3 -m bfs run --generate "kronecker:scale=$1" --algorithm 2d-do \
        --backend gpu --grid 1x2 --roots "$ROOTS" --out "/tmp/energy-g$rep" --force \
        > "$OUT/s$1-energy-g$rep.log" 2>&1
      for run in "/tmp/energy-m$rep" "/tmp/energy-g$rep"; do
        python3 - "$run" <<'PY'
import json, sys
info = json.load(open(sys.argv[1] + "/run.json"))
e, m = info.get("energy"), info["measurements"]
print(f"{info['parameters']['algorithm']} on {info['parameters']['mpi_size']} GPU(s): "
      f"{m['hmean_teps'] / 1e9:.1f} GTEPS, valid {info['valid']}, "
      + (f"{e['watts']:.0f} W ({', '.join(f'{w:.0f}' for w in e['watts_per_device'])}), "
         f"{e['teps_per_watt'] / 1e6:.1f} MTEPS/W over {e['seconds']:.1f} s, "
         f"{e['searches']} searches" if e else f"energy: {info.get('energy_unavailable')}"))
PY
      done
    done
    ;;
  *) echo "usage: $0 check | push SCALE... | proxy SCALE... | grids SCALE... | big SCALE | largest SCALE [ALG...] | pair SCALE | energy SCALE" >&2
     exit 2 ;;
esac
