"""Stage 5 of the pipeline: the harness behind `bfs run`, `bfs validate` (runner.py) and `bfs
bench` (bench.py): root selection (roots.py), Graph500 statistics and output (stats.py), the
environment record (envinfo.py)."""
