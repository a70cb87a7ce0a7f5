#!/usr/bin/env bash
# Sourced by the stages that run tests/gpu_grid_checks.py (one_adjacency.sh, peer.sh).
grid_check() {   # CHECK R C [SECONDS]: tests/gpu_grid_checks.py CHECK on an R x C grid, its
  # log $OUT/check-CHECK-RxC.log; where it fails, its tail and the stage's exit (a job's, in
  # the background)
  local log="$OUT/check-$1-$2x$3.log"
  if ! timeout "${4:-280}" mpiexec -n $(( $2 * $3 )) python3 tests/gpu_grid_checks.py "$1" \
      "$2" "$3" > "$log" 2>&1; then
    tail -40 "$log"; exit 1
  fi
  tail -1 "$log"
}
