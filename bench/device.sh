#!/usr/bin/env bash
# The GPU measurements of BENCHMARKS.md, one entry point, run from the repository root on a GPU
# machine (each stage fits a 10-minute device call; OUT names the folder its logs and JSON go to):
#
#   bash bench/device.sh STAGE [ARGS...]
#
# Stages (what each runs and writes; bench/stages/STAGE.sh holds its commands and its own
# options, read there):
#   tests [EXPR]      the GPU tests, one GPU and grids of ranks sharing it (pytest -m gpu,
#                     EXPR selects with -k); four-GPU tests where the machine has four
#   one-gpu kronecker|others|run
#                     merrill, merrill-do and 2d on one GPU: scales 25-26 (kronecker), the
#                     lattice, SNAP graphs and scale 28 (others), scale 25 through disk (run)
#   loop              the level loop: lattice 2000x2000 and Kronecker s26, merrill-do against
#                     merrill-do@loop_spread=0 and @loop=cta in one bench each, and root by
#                     root against loop=cta (ab_roots.py)
#   variants          merrill's kernel variants side by side, a road-like lattice
#   peer [loop [GRIDS]|share-checks|share|share-big|targets]
#                     2d-do through peer memory (nvidia-h100-x4): the level loop across GPUs,
#                     merrill-do on one GPU, then 2d-do against 2d-do@peer=off in one bench a
#                     grid (1x2 1x4 unless GRIDS) on the 2000 x 2000 lattice (8 roots) and
#                     Kronecker s26 (64 roots) (loop, the default); In's all-gather through
#                     peer memory: its grid checks on 1x4 and 2x2 (share-checks), against
#                     NCCL's at scale 26 (share) and 30 (share-big) on 1x4 and 2x2, merrill-do
#                     on one GPU beside them; issue 48's targets in one call (targets)
#   one-adjacency checks|big|alpha|fold|pairs
#                     2d-do with the block's CSC alone (nvidia-h100-x4): the grid checks on
#                     1x2 and 2x2 and scale 26 on 1x4 beside both structures and merrill-do
#                     (checks); scale 30 on 1x4 and 2x2, 29 on 1x2 (big); scale 30 on
#                     1x4 at three alphas in one bench (alpha); the frontier's fold on
#                     and off at scale 30 on 1x4 and merrill-do's scale 28 (fold); the
#                     small push's pairs on and off at scales 26 and 30 on 1x4 (pairs)
#   grid tests|bench S...|cost S...
#                     2d on 1x1, 1x2, 2x1 grids (bench), the COST check of the 1x1 grid (cost)
#   two-gpus check|push S...|proxy S...|big S|pair S ...
#                     two GPUs against one (nvidia-h100-x2 or larger)
#   largest tests|stream S|big S...|graphdir S|fill S|...
#                     the largest graph one GPU holds, Kernel 1 streamed, memory peaks
#   headline          BENCHMARKS.md's headline rows through bfs bench and the workflow
#   workflow          config/one_gpu.yaml end to end at small scales
#   box               config/gpu_box.yaml (or CONFIG) end to end, across calls (LIMIT, RESUME)
#   energy S          the energy tests, then merrill-do at scale S with its joules and MTEPS/W
#   compare S ROOTS A B...
#                     variants of a searcher root by root in one process (bench/ab_roots.py)
#   trees OLD [ROUNDS [RANKS]] -- BENCH_ARGS...
#                     the same bfs bench from this tree and from OLD (an older bfs/, made
#                     with git archive before the call), alternated, each inside its tree
#
# The device returns at most 8 files: PACK=1 leaves $OUT as one $OUT.tgz (gzip -dc | tar x).
#
# Every stage runs with NVLink multicast off (NCCL_NVLS_ENABLE=0, NVSHMEM_DISABLE_NVLS=1,
# TORCH_SYMM_MEM_DISABLE_MULTICAST=1: a program using it can take a shared host's GPUs out of
# service), mpiexec allowed as root, the package and bench/ importable, and the GPU's name,
# clocks and driver written to $OUT/gpu.txt first. One-off probes are in bench/probes/ (its
# README says what each answered); CPU benchmarks are bench/bench_*.py and validate_cpu.py.
set -o pipefail
cd "$(dirname "$0")/.."
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
export PYTHONPATH=.:bench${PYTHONPATH:+:$PYTHONPATH}
# the GPU test files of one GPU (its grid ranks sharing it), by stage; the stages' tests read it
export GPU_TEST_FILES="tests/test_gpu_merrill.py tests/test_gpu_kernel1.py tests/test_gpu_seeds.py
    tests/test_gpu_2d.py tests/test_gpu_validate.py"
stage=${1:-}
shift || true
usage() { sed -n '2,/^set -o pipefail/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
case "$stage" in
    ""|-h|--help|help) usage; exit 0 ;;
    tests|one-gpu|loop|variants|peer|one-adjacency|grid|two-gpus|largest|headline|workflow|box|energy|compare|trees) ;;
    *) echo "bench/device.sh: no stage '$stage' (bash bench/device.sh help lists them)" >&2
       exit 2 ;;
esac
export OUT=${OUT:-bench/results/$stage}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv \
    > "$OUT/gpu.txt" 2>&1 || true
case "$stage" in
tests)
    # the one-GPU file, then the grid file (its tests say how many GPUs each needs)
    select=()
    [ -n "${1:-}" ] && select=(-k "$1")
    # shellcheck disable=SC2086  # GPU_TEST_FILES: a list of files
    python3 -m pytest -q -m gpu $GPU_TEST_FILES tests/test_gpu_grid.py tests/test_energy.py \
        -p no:cacheprovider "${select[@]}" 2>&1 | tee "$OUT/gpu-tests.log" | tail -5
    ;;
loop)
    python3 -m bfs bench --backend gpu --lattice-graphs 2000x2000 --roots 8 \
        --algorithms merrill-do,merrill,merrill-do@loop_spread=0,merrill-do@loop=cta \
        --baseline none --out "$OUT/lattice" 2>&1 | tee "$OUT/lattice.log" | tail -6
    python3 -m bfs bench --backend gpu --scales 26 --roots 64 \
        --algorithms merrill-do,merrill-do@loop_spread=0,merrill-do@loop=cta --baseline none \
        --out "$OUT/kron26" 2>&1 | tee "$OUT/kron26.log" | tail -4
    python3 bench/ab_roots.py 26 64 merrill-do@loop=cta merrill-do 2>&1 \
        | tee "$OUT/ab-s26.log" | tail -3
    ;;
energy)
    python3 -m pytest -q -m gpu tests/test_energy.py -p no:cacheprovider 2>&1 | tail -3
    python3 -m bfs bench --backend gpu --scales "${1:-26}" --roots 64 --algorithms merrill-do \
        --baseline none --out "$OUT/energy" 2>&1 | tee "$OUT/energy.log" | tail -4
    ;;
compare)
    python3 bench/ab_roots.py "$@" --out "$OUT/compare" 2>&1 | tee "$OUT/compare.log"
    ;;
*)  # one-gpu variants grid two-gpus largest headline workflow box one-adjacency peer trees
    status=0
    bash "bench/stages/${stage//-/_}.sh" "$@" || status=$?
    ;;
esac
stage_status=$?
status=${status:-$stage_status}
if [ -n "${PACK:-}" ]; then
    tar -C "$(dirname "$OUT")" -czf "$OUT.tgz" "$(basename "$OUT")" && rm -rf "$OUT"
fi
exit "$status"
