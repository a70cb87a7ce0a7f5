"""Stage 3 of the pipeline, Kernel 1 (Graph500 "construction", the time a run records as
construction_time): the graph structures a search runs on, built from an edge list. It sits
between the partition (stage 2: a grid's layout and its block files) and the algorithms
(stage 4: the searchers, whose registry's build() calls in here): it imports graphs, partition,
comm and the shared plumbing (bfs.device, bfs.nvtx), never a searcher or the harness.

What it builds, and where each lives:

    csr_cpu.py   the undirected CSR on the CPU (a Numba counting sort: a degree pass and a
                 scatter pass over the edge list, whole or made again chunk by chunk), for the
                 CPU searchers, hybrid and gpu-out-of-core
    csr_gpu.py   GPU Kernel 1 (CUDA in kernel1.cu): the one-GPU CSR from the edge list held on
                 the device (build_csr_gpu, csr_from_edges) or streamed chunk by chunk
                 (csr_from_streamed); a distributed grid's block CSR and 2d-do's block CSC
                 from the block's entries, whole or routed a chunk at a time (block_csr); the
                 bucketed radix sort every GPU CSR builder shares (sort_rows); the degrees of a
                 streamed list (nonloop_degrees)
    routing.py   a grid's blocks without files: each rank's share of the input edges routed to
                 the blocks' owners, on GPUs (route_to_blocks, CUDA in route.cu) or CPUs
                 (route_cpu), whole (place_gpu, place_cpu) or again a chunk at a time for each
                 pass of the build (RoutedBlock); each rank's choice of the two, agreed by all
                 (choose_build, agreed_stream), and place_block, which the MPI session calls
                 to lay out the grid and place its rank's block; a partition directory's block
                 held on the host handed to a streamed build in slices (BlockSlices)
    memory.py    the memory models of every build and the refusals they make before it starts
                 (the in-memory and streamed one-GPU Kernel 1, a grid's block routed whole or
                 a chunk at a time, the largest Kronecker scale each fits), the sort buckets
                 (SORT_LIMIT, RESORT_LIMIT) and the routed chunk (ROUTE_CHUNK); the device edge
                 list's, the CSR's and the search state's bytes a vertex and an edge stay in
                 bfs.device, beside check_fits

The searchers' own counts over a device CSR and a search's levels (level_sizes, degree_sum) and
the registry's entry points over a device CSR are bfs.algorithms.device_csr's.
"""
