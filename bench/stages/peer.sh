#!/usr/bin/env bash
# A stage of bench/device.sh (which sets the environment every stage shares: multicast off,
# mpiexec as root, PYTHONPATH, $OUT/gpu.txt); run it as `bash bench/device.sh peer PART`.
# 2d-do's exchanges through peer memory between the GPUs of one host (nvidia-h100-x4), each
# part sized for one 10-minute call:
#   loop [GRIDS]  the level loop across GPUs (fu_2d_do_peer.py; the default part): merrill-do
#           on one GPU, then 2d-do against 2d-do@peer=off in one bench a grid (GRIDS, default
#           "1x2 1x4"), on the 2000 x 2000 lattice (8 roots, the first root's level clock;
#           2d-do@loop_spread=0 too: the frontier on the fewest blocks; 2d-do@floor=0:
#           Beamer's rule alone, the last levels bottom-up) and Kronecker
#           s26 (64 roots)
#   share-checks  In's all-gather through peer memory (comm/peer.py's PeerShare, on by peer's
#           choice in a grid row of one host's GPUs; on a grid of one row the switch words'
#           sum too): the grid checks share, search_csc and search_do on 1x4 and 2x2
#   share   scale 26 on 1x4 and 2x2 with both structures and with the CSC alone, each against
#           peer=off (NCCL's all-gather and all-reduce) in one bench a grid (ROOTS, default 16)
#   share-big  scale 30 on 1x4 and 2x2 (CSC alone), the same, every level's steps timed
#   targets issue 48's targets in one call, 2d-do at its defaults with merrill-do on one GPU of
#           the same machine before each graph: the lattice (8 roots) on 1x2 and 1x4,
#           Kronecker s26 (64 roots) on 1x2, 1x4 and 2x2, s28 (16 roots) on 1x4; the first
#           root's level clock on every grid (the fixed part of a level)
#   OUT=dir [ROOTS=16] bash bench/device.sh peer [loop [GRIDS]|share-checks|share|share-big|targets]
set -uo pipefail
# shellcheck source=bench/stages/grid_check.sh
source "$(dirname "$0")/grid_check.sh"
ROOTS=${ROOTS:-16}
part=${1:-loop}
case "$part" in
loop|*x*)   # `peer 1x2` (GRIDS alone) as before the parts
  [ "$part" = loop ] && shift
  grids=${1:-1x2 1x4}
  python3 -m bfs bench --backend gpu --lattice-graphs 2000x2000 --roots 8 \
    --algorithms merrill-do --baseline none --out "$OUT/lattice-1gpu" 2>&1 \
    | tee "$OUT/lattice-1gpu.log" | tail -3
  for g in $grids; do
    mpiexec -n $(( ${g%x*} * ${g#*x} )) python3 -m bfs bench --backend gpu --grid "$g" \
      --lattice-graphs 2000x2000 --roots 8 \
      --algorithms 2d-do 2d-do@loop_spread=0 2d-do@floor=0 2d-do@peer=off \
      --profile-levels --out "$OUT/lattice-$g" 2>&1 | tee "$OUT/lattice-$g.log" | tail -4
  done
  python3 -m bfs bench --backend gpu --scales 26 --roots 64 --algorithms merrill-do \
    --baseline none --out "$OUT/kron26-1gpu" 2>&1 | tee "$OUT/kron26-1gpu.log" | tail -3
  for g in $grids; do
    mpiexec -n $(( ${g%x*} * ${g#*x} )) python3 -m bfs bench --backend gpu --grid "$g" \
      --scales 26 --roots 64 --algorithms 2d-do 2d-do@peer=off \
      --out "$OUT/kron26-$g" 2>&1 | tee "$OUT/kron26-$g.log" | tail -4
  done
  ;;
share-checks)
  for g in "1 4" "2 2"; do
    # shellcheck disable=SC2086  # g: the grid's R and C
    grid_check share $g 120 && grid_check search_csc $g && grid_check search_do $g || exit 1
  done
  ;;
share|share-big)
  s=26 variants=(2d-do 2d-do@peer=off 2d-do@adjacency=csc 2d-do@adjacency=csc,peer=off)
  [ "$part" = share-big ] && s=30 variants=(2d-do@adjacency=csc 2d-do@adjacency=csc,peer=off)
  python3 -m bfs bench --backend gpu --scales "$(( s < 28 ? s : 28 ))" --roots "$ROOTS" \
    --algorithms merrill-do --baseline none --out "$OUT/$part-1gpu" 2>&1 \
    | tee "$OUT/$part-1gpu.log" | tail -3
  for g in 1x4 2x2; do
    mpiexec -n 4 python3 -m bfs bench --backend gpu --grid "$g" --scales "$s" --roots "$ROOTS" \
      --algorithms "${variants[@]}" --profile-levels --out "$OUT/$part-s$s-$g" 2>&1 \
      | tee "$OUT/$part-s$s-$g.log" | grep -v " search [0-9]" | tail -6
  done
  ;;
targets)
  # a graph's bench arguments by name, then its grids
  lattice=(--lattice-graphs 2000x2000 --roots 8) s26=(--scales 26 --roots 64)
  s28=(--scales 28 --roots 16)
  for spec in "lattice 1x2 1x4" "s26 1x2 1x4 2x2" "s28 1x4"; do
    read -r name grids <<< "$spec"
    declare -n args=$name
    python3 -m bfs bench --backend gpu "${args[@]}" --algorithms merrill-do --baseline none \
      --out "$OUT/$name-1gpu" 2>&1 | tee "$OUT/$name-1gpu.log" | tail -3
    for g in $grids; do
      mpiexec -n $(( ${g%x*} * ${g#*x} )) python3 -m bfs bench --backend gpu --grid "$g" \
        "${args[@]}" --algorithms 2d-do --profile-levels --out "$OUT/$name-$g" 2>&1 \
        | tee "$OUT/$name-$g.log" | grep -v " search [0-9]" | tail -4
    done
    unset -n args
  done
  ;;
*) echo "peer: loop [GRIDS], share-checks, share, share-big or targets, got '$part'" >&2
   exit 2 ;;
esac
