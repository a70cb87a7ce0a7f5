#!/usr/bin/env bash
# A stage of bench/device.sh (which sets the environment every stage shares: multicast off,
# mpiexec as root, PYTHONPATH, $OUT/gpu.txt); run it as `bash bench/device.sh trees ...`.
# Two versions of the code in one device call: the same `bfs bench` from this tree and from
# OLD, a folder holding an older bfs/ (made on your machine before the call, and carried as
# an untracked folder: mkdir OLD && git archive REV bfs | tar -x -C OLD), alternated ROUNDS
# times. Each process starts inside its own tree: `python -m` puts the working directory
# first on sys.path, so PYTHONPATH=OLD alone would run this tree twice. RANKS > 1 runs each
# under mpiexec -n RANKS.
#   OUT=dir bash bench/device.sh trees OLD [ROUNDS [RANKS]] -- BENCH_ARGS...
#   e.g. bash bench/device.sh trees abold 2 -- --backend gpu --lattice-graphs 2000x2000 \
#            --roots 8 --algorithms merrill-do --baseline none
set -uo pipefail
here=$PWD
old=${1:?trees: name the folder of the older tree}
shift
rounds=2 ranks=1
[ "${1:-}" != "--" ] && [ -n "${1:-}" ] && { rounds=$1; shift; }
[ "${1:-}" != "--" ] && [ -n "${1:-}" ] && { ranks=$1; shift; }
[ "${1:-}" = "--" ] && shift
[ -d "$old/bfs" ] || { echo "trees: $old/bfs is not a folder" >&2; exit 2; }
old=$(cd "$old" && pwd)
launch=()
[ "$ranks" -gt 1 ] && launch=(mpiexec -n "$ranks")
status=0
for ((i = 1; i <= rounds; ++i)); do
    for tree in new old; do
        dir=$here
        [ $tree = old ] && dir=$old
        (cd "$dir" && PYTHONPATH=.:"$here/bench" "${launch[@]}" python3 -m bfs bench "$@" \
            --out "$OUT/$tree-$i" > "$OUT/$tree-$i.log" 2>&1) || status=1
        echo "== $tree $i"
        grep -A20 "GTEPS(hm)" "$OUT/$tree-$i.log" | grep -v "^\[bfs\]" | cut -c1-150
    done
done
exit $status
