"""Stage 6 of the pipeline: the harness behind `bfs run`, `bfs validate` (runner.py: the one
place that builds, times, validates and records a search) and `bfs bench` (bench.py, a front
end over runner's search loop): what a run asks for (run_options.py), the request checked
and its session opened (request.py), the sessions that hold a graph for one process
(sessions_local.py) or one MPI rank's block (sessions_mpi.py; the block routed to it, whole or
a chunk at a time, by the build stage: bfs.build.routing), graphs generated in place
(generated.py), search timing
(timing.py), the --validate policy (validation.py), root selection (roots.py), Graph500
statistics, output and bench's summaries (stats.py), the environment record (envinfo.py), the
run directory's files and their checked reading (rundir.py), `bfs verify` over graph, partition
and run directories (verify.py), and the shared cache of graphs and partitions behind
`--cache` (cache.py)."""
