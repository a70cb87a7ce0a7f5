"""bfs: Graph500-exact graphs, CPU/MPI/GPU breadth-first search, validated TEPS."""
__version__ = "0.1.0"
