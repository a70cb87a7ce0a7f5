"""Stage 3 of the pipeline, Kernel 1 (Graph500 "construction"): the graph structures a search
runs on, built from an edge list.

    csr_cpu.py   the undirected CSR on the CPU (a Numba counting sort, two passes over the
                 edge list whole or made again chunk by chunk)
"""
