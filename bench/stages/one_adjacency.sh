#!/usr/bin/env bash
# A stage of bench/device.sh (which sets the environment every stage shares: multicast off,
# mpiexec as root, PYTHONPATH, $OUT/gpu.txt); run it as `bash bench/device.sh one-adjacency`.
# 2d-do with the block's CSC alone (adjacency=csc, issue 49) on a four-GPU machine, each part
# sized for one 10-minute call:
#   checks  the GPU grid checks on 1x2 and 2x2 (stops here if they fail), then scale 26 on 1x4
#           beside the two-structure blocks and the CSC alone without hub pairs
#           (hub_degree=0) (one bench, every level's steps timed: --profile-levels) and
#           merrill-do on one GPU
#   big     the largest scales, BIG="SCALE:GRID ..." (default "30:1x4 30:2x2 29:1x2"), with the
#           CSC alone, each a bench of its own
#   alpha   where the first bottom-up level goes (scale 30 on 1x4: 13.5 ms of a 27.5 ms search
#           at the default alpha, BENCHMARKS.md): POINT="SCALE:GRID" (default 30:1x4) with
#           ALPHAS (default "40 200 1000", the first the GPU's default) in one bench
#   fold    the frontier's fold (merrill_do.fold_words; bottom_up.cuh's FoldedFrontier): its
#           GPU tests (merrill-do's fold variants, the grid checks search_csc on 2x2 and
#           search_do on 1x2; stops here if they fail), then scale 30 on 1x4 (CSC alone) and
#           merrill-do at scale 28 on one GPU, each with the fold (auto) and without (fold=0)
#           in one bench
#   pairs   the small push (small_push: a pushed level's rows sent as pairs): the grid checks
#           search_csc on 1x2 and 2x2 (stops here if they fail), then scale 26 and scale 30
#           on 1x4, each with the CSC alone, small_push on (s30: auto; s26: 2^18, under
#           auto's 16 MiB of row bitmap) and 0 in one bench
#           (every level's steps timed)
# ROOTS (default 16) Graph500 roots, every search validated.
#   OUT=dir [ROOTS=16] [BIG="30:1x4"] [POINT=30:1x4 ALPHAS="40 200"] \
#     bash bench/device.sh one-adjacency checks|big|alpha|fold|pairs
set -uo pipefail
ROOTS=${ROOTS:-16}
part=${1:-checks}
# shellcheck source=bench/stages/grid_check.sh
source "$(dirname "$0")/grid_check.sh"
csc_checks() { grid_check search_csc 1 2 && grid_check search_csc 2 2; }
case "$part" in
checks)
  csc_checks
  python3 -m bfs bench --backend gpu --scales 26 --roots "$ROOTS" --algorithms merrill-do \
    --baseline none --out "$OUT/s26-1gpu" 2>&1 | tee "$OUT/s26-1gpu.log" | tail -3
  mpiexec -n 4 python3 -m bfs bench --backend gpu --grid 1x4 --scales 26 --roots "$ROOTS" \
    --algorithms 2d-do 2d-do@adjacency=csc 2d-do@adjacency=csc,hub_degree=0 \
    --profile-levels --out "$OUT/s26-1x4" 2>&1 \
    | tee "$OUT/s26-1x4.log" | tail -4
  ;;
big)
  for point in ${BIG:-30:1x4 30:2x2 29:1x2}; do
    s=${point%%:*} g=${point#*:}
    mpiexec -n $(( ${g%x*} * ${g#*x} )) python3 -m bfs bench --backend gpu --grid "$g" \
      --scales "$s" --roots "$ROOTS" --algorithms 2d-do@adjacency=csc \
      --out "$OUT/s$s-$g" 2>&1 | tee "$OUT/s$s-$g.log" | grep -v " search [0-9]" | tail -4
  done
  ;;
alpha)
  point=${POINT:-30:1x4}
  s=${point%%:*} g=${point#*:}
  variants=()
  for a in ${ALPHAS:-40 200 1000}; do variants+=("2d-do@adjacency=csc,alpha=$a"); done
  mpiexec -n $(( ${g%x*} * ${g#*x} )) python3 -m bfs bench --backend gpu --grid "$g" \
    --scales "$s" --roots "$ROOTS" --algorithms "${variants[@]}" --profile-levels \
    --out "$OUT/alpha-s$s-$g" 2>&1 | tee "$OUT/alpha-s$s-$g.log" | grep -v " search [0-9]" \
    | tail -8
  ;;
fold)
  # shellcheck disable=SC2086  # GPU_TEST_FILES (bench/device.sh): a list of files
  python3 -m pytest -q -m gpu $GPU_TEST_FILES -k fold -p no:cacheprovider \
    > "$OUT/fold-tests.log" 2>&1 || { tail -30 "$OUT/fold-tests.log"; exit 1; }
  tail -1 "$OUT/fold-tests.log"
  grid_check search_csc 2 2 300 &       # side by side: six ranks, four GPUs
  grid_check search_do 1 2 300 &
  failed=0
  for job in $(jobs -p); do wait "$job" || failed=1; done
  [ "$failed" = 0 ] || exit 1
  mpiexec -n 4 python3 -m bfs bench --backend gpu --grid 1x4 --scales 30 --roots "$ROOTS" \
    --algorithms 2d-do@adjacency=csc 2d-do@adjacency=csc,fold=0 --profile-levels \
    --out "$OUT/fold-s30-1x4" 2>&1 | tee "$OUT/fold-s30-1x4.log" | grep -v " search [0-9]" \
    | tail -4
  python3 -m bfs bench --backend gpu --scales 28 --roots "$ROOTS" \
    --algorithms merrill-do merrill-do@fold=0 --baseline none --profile-levels \
    --out "$OUT/fold-s28-1gpu" 2>&1 | tee "$OUT/fold-s28-1gpu.log" \
    | grep -v " search [0-9]" | tail -4
  ;;
pairs)
  csc_checks
  # s26's row bitmaps (8 MiB) are under auto's 16 MiB: the small push forced on there
  for s in 26 30; do
    on=2d-do@adjacency=csc
    [ "$s" = 26 ] && on=2d-do@adjacency=csc,small_push=262144
    mpiexec -n 4 python3 -m bfs bench --backend gpu --grid 1x4 --scales "$s" --roots "$ROOTS" \
      --algorithms "$on" 2d-do@adjacency=csc,small_push=0 --profile-levels \
      --out "$OUT/pairs-s$s-1x4" 2>&1 | tee "$OUT/pairs-s$s-1x4.log" \
      | grep -v " search [0-9]" | tail -4
  done
  ;;
*) echo "one-adjacency: checks, big, alpha, fold or pairs, got '$part'" >&2
   exit 2 ;;
esac
