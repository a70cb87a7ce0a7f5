"""Stage 7 of the pipeline: run directories -> tables (tables.py) and figures (figures.py), each
reproducing a published presentation; runs.py loads, checks and pools the runs."""
from .figures import FIGURES, write_figure
from .runs import load_levels, load_runs, read_runs_file
from .tables import TABLES, write_table

__all__ = ["FIGURES", "TABLES", "load_levels", "load_runs", "read_runs_file", "write_figure",
           "write_table"]
