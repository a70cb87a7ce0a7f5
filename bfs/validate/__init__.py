"""Stage 5 of the pipeline: the five Graph500 rules on a search's parent (and level) arrays,
single-process and per block on the CPU (cpu.py), and on the GPU (gpu.py + validate.cu). The
validators import no search: they check what any algorithm returned."""
from .cpu import Validation, validate, validate_blocks, validate_chunks

__all__ = ["Validation", "validate", "validate_blocks", "validate_chunks"]
