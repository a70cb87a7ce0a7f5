"""Stage 5 of the pipeline: the harness behind `bfs run`, `bfs validate` (runner.py) and `bfs
bench` (bench.py): root selection (roots.py), Graph500 statistics and output (stats.py), the
environment record (envinfo.py), the run directory's files and their checked reading
(rundir.py), `bfs verify` over graph, partition and run directories (verify.py), and the shared
cache of graphs and partitions behind `--cache` (cache.py)."""
