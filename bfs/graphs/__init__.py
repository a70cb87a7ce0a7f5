"""Stage 1 of the pipeline: graphs into graph directories (graphdir.py, the contract).

Graph500 Kronecker graphs (prng.py, kronecker.py; kronecker_gpu.py + kronecker.cu generate the
same edges on the GPU), SNAP edge lists (snap.py), grids (grid.py), downloads (fetch.py), and
edge lists into device memory (device_edges.py)."""
