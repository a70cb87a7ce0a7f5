"""Stage 2 of the pipeline: a graph directory cut into per-rank edge blocks (a partition
directory) over an R x C rank grid: the layout (layout.py) and the block files with their
manifest (blocks.py)."""
from .blocks import (KINDS, MANIFEST_JSON, is_partition_dir, load_manifest, partition_graph,
                     read_block)
from .layout import GridLayout, squarest_grid

__all__ = ["KINDS", "MANIFEST_JSON", "GridLayout", "is_partition_dir", "load_manifest",
           "partition_graph", "read_block", "squarest_grid"]
