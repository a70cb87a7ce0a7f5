"""Multi-rank GPU checks, run by tests/test_gpu_grid.py as `mpiexec -n 2 python3 THIS CHECK R C`.
Each check raises (and the rank exits non-zero) on a mismatch; rank 0 prints `ok CHECK`.

  exchange   every NcclExchange operation equals MpiExchange's on the same data, bit for bit
  route      in-place generation + GPU routing equals `bfs partition`'s blocks (as multisets)
  search     2d on the GPU grid, --comm nccl and mpi, scan and wave: levels equal the CPU BFS,
             every search valid by bfs.validate.grid_gpu with the CPU validator's nedge
  search1d   the same for 1d (P x 1 grids), bitmap and list exchanges, nccl and mpi
  search_do  the same for 2d-do: all top-down, bottom-up from level 1 and the defaults; the
             directions and edges examined against the CPU 2d-do on the same blocks; chains
             replayed as CUDA graphs as chains launched one by one
  search_csc 2d-do with the block's CSC alone (adjacency=csc): no CSR kept; levels and trees
             as search's, validated through the CSC; the directions and the switch's words
             those of the two-structure search on the GPU and of the CPU's adjacency=csc
  search_semiring  semiring on the GPU grid, nccl and mpi: every search valid and equal to the
             CPU BFS, and every tree the CPU semiring's, parent for parent (the min is
             deterministic)
  faults     a fault planted in one rank's results is caught, whichever rank holds it
  share      the grid row's all-gather through peer memory (bfs.comm.peer's PeerShare, peer=on:
             ranks sharing a GPU too) equals MPI's, for empty, sparse and dense pieces, and its
             sum of four words MPI's all-reduce, launched and replayed as a CUDA graph; a share
             or sum whose go word is 0 changes nothing; a rank that does not come is named by
             the others within the timeout
  streamed   a block routed again a chunk at a time (RoutedBlock, chunks of a few hundred
             edges, ragged shares) builds the same block CSR (and 2d-do's CSC) as the block
             routed whole, for 2d, 2d-do and 1d, and its survey the same entries and sources;
             the searches over it equal the CPU BFS
"""
import sys
import tempfile
from pathlib import Path

import cupy as cp
import numpy as np
from mpi4py import MPI

from bfs.algorithms import RunContext, get_algorithm, merrill_do
from bfs.build.csr_cpu import build_csr
from bfs.build.routing import route_to_blocks
from bfs.algorithms.seq_csr import bfs_csr
from bfs.comm.exchange import LevelClock, MpiExchange, NcclExchange
from bfs.graphs.kronecker import generate_edges
from bfs.harness.generated import GeneratedKronecker
from bfs.algorithms import Block
from bfs.harness.sessions_mpi import select_gpu
from bfs.partition import GridLayout
from bfs.validate import validate
from bfs.validate.grid_gpu import validate_grid_device

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
SCALE, EF = 11, 16


def check_exchange(R, C):
    rng = np.random.default_rng(100 + rank)
    nccl, host = NcclExchange(comm), MpiExchange(comm)
    p = comm.Get_size()
    words = rng.integers(0, 2**63, 1000, dtype=np.int64).astype(np.uint64)
    for op in ("sum", "max"):
        a = rng.integers(-5, 50, 17).astype(np.int64)
        want = np.empty_like(a)
        host.allreduce(a, want, op)
        got = cp.empty(17, cp.int64)
        nccl.allreduce(cp.asarray(a), got, op)
        assert (got.get() == want).all(), op
    buf = words.copy() if rank == 1 else np.zeros_like(words)
    host.bcast(buf, 1)
    dev = cp.asarray(words) if rank == 1 else cp.zeros(words.size, cp.uint64)
    nccl.bcast(dev, 1)
    assert (dev.get() == buf).all() and (buf == comm.bcast(words if rank == 1 else None, 1)).all()
    dest, source = (rank + 1) % p, (rank - 1) % p
    want = np.zeros_like(words)
    host.sendrecv(words, dest, want, source)
    got = cp.zeros(words.size, cp.uint64)
    nccl.sendrecv(cp.asarray(words), dest, got, source)
    assert (got.get() == want).all()
    counts = np.array([3 + 5 * r for r in range(p)], np.int64)
    displs = np.concatenate([[0], np.cumsum(counts)[:-1]])
    mine = words[:counts[rank]]
    want = np.zeros(counts.sum(), np.uint64)
    host.allgatherv(mine, want, counts, displs)
    got = cp.zeros(int(counts.sum()), cp.uint64)
    nccl.allgatherv(cp.asarray(mine), got, counts, displs)
    assert (got.get() == want).all()
    send_counts = rng.integers(0, 20, p).astype(np.int64)
    recv_counts = host.alltoall_counts(send_counts)
    send = words[:send_counts.sum()]
    want = np.zeros(recv_counts.sum(), np.uint64)
    host.alltoallv(send, send_counts, want, recv_counts)
    got = cp.zeros(int(recv_counts.sum()), cp.uint64)
    nccl.alltoallv(cp.asarray(send), send_counts, got, recv_counts)
    assert (got.get() == want).all()


def blocks_in_place(R, C):
    layout = GridLayout(2 ** SCALE, R, C)
    graph = GeneratedKronecker(SCALE, EF)
    src, dst = graph.device_edges(*graph.share(comm.Get_rank(), comm.Get_size()))
    x = NcclExchange(comm)
    return layout, route_to_blocks(layout, src, dst, x)


def check_route(R, C):
    from bfs.graphs.kronecker import write_kronecker
    from bfs.partition import load_manifest, partition_graph, read_block
    layout, (bsrc, bdst) = blocks_in_place(R, C)
    got = np.sort(bsrc.get().astype(np.uint64) << 32 | bdst.get().astype(np.uint64))
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(comm.bcast(tmp, root=0))    # rank 0's directory, on the same host
        part = tmp / "part"
        if rank == 0:
            write_kronecker(tmp / "g", SCALE, EF)
            partition_graph(tmp / "g", part, R, C)
        comm.Barrier()
        fsrc, fdst = read_block(part, load_manifest(part), rank)
        want = np.sort(fsrc.astype(np.uint64) << 32 | fdst.astype(np.uint64))
        comm.Barrier()
    assert got.size == want.size and (got == want).all(), (rank, got.size, want.size)


def searcher_for(R, C, bsrc, bdst, layout, algorithm="2d", backend="gpu", **options):
    manifest = {"grid": [R, C], "bounds": layout.bounds.tolist(), "n_vertices": 2 ** SCALE}
    return get_algorithm(algorithm).load(backend).build(Block(comm, manifest, bsrc, bdst),
                                                        RunContext(backend, options))


def gathered(searcher):
    return searcher.gather(2 ** SCALE)


def check_search(R, C):
    search_equals_cpu(R, C, "2d", ({"comm": "nccl"}, {"comm": "mpi"},
                                   {"comm": "nccl", "exchange": "wave"},
                                   {"comm": "mpi", "exchange": "wave"}))


def check_search1d(R, C):
    """1d on a P x 1 grid: bitmaps only (small_frontier 0), lists wherever they are smaller
    (small_frontier huge), and the default, each through NCCL and MPI; every search equal to
    the CPU BFS and valid."""
    kinds = search_equals_cpu(R, C, "1d", [{"comm": c, "small_frontier": f}
                                            for c in ("nccl", "mpi") for f in (0, 10**9, 1000)])
    for k in (0, 3):
        assert kinds[k] == {"bitmap": 1, "list": 0} and kinds[k + 1]["list"] == 1, kinds


def check_search_do(R, C):
    """2d-do on the GPU grid: every level top-down (alpha 1), bottom-up from level 1 (alpha
    1e9, no floor), the defaults (NCCL), and the defaults through MPI with the wave exchange.
    Every search equals the CPU BFS and is valid (search_equals_cpu); every rank reports the
    same directions and edges examined; the directions are the CPU 2d-do's on the same blocks
    (both switch on the same n_f, m_f and m_u, and the GPU's floor), and a search that stays
    top-down examines the same edges per level as the CPU's (the frontier's block edges); the
    defaults go bottom-up on some root, and there examine fewer edges than all top-down from
    that root; chains
    replayed as CUDA graphs (graphs=1, the default where the exchanges are NCCL) search as the
    chains launched one by one (graphs=0); bottom-up levels in sub-steps down the grid column
    (substeps=1, the default) search as every block at once (substeps=0), reading no more
    in-edges. On a grid of one row the level loop across GPUs and In's all-gather through
    peer memory (peer, the default there) search as the host's chains and NCCL's all-gathers
    (peer=off) in every direction setting, and a search the loop runs
    whole reads the device once. In's fold (fold=1) searches as without it."""
    # the host's chains (peer off), then the level loop across GPUs (peer, the default where
    # every rank has a GPU of its own: on a grid of one row), from the root and back from
    # bottom-up (beta 18)
    option_sets = tuple({**o, "peer": "off"} for o in (
        {"alpha": 1.0}, {"alpha": 1e9, "floor": 0.0}, {}, {"comm": "mpi", "exchange": "wave"},
        {"beta": 18.0, "ahead": 0, "td_ahead": 0}, {"beta": 18.0},
        {"alpha": 1.0, "td_ahead": 0}, {"alpha": 1.0, "td_ahead": 3},
        {"graphs": 0}, {"beta": 18.0, "graphs": 0},
        {"substeps": 0}, {"substeps": 0, "comm": "mpi", "exchange": "wave"},
        {"substeps": 0, "beta": 18.0}, {"substeps": 0, "graphs": 0},
        {"fold": 1}, {"fold": 1, "beta": 18.0, "graphs": 0})) \
        + ({}, {"beta": 18.0}, {"alpha": 1e9, "floor": 0.0}, {"alpha": 1.0})
    layout, (bsrc, bdst) = blocks_in_place(R, C)
    # one rule, the parameters the GPU ran with: its defaults are merrill-do's (alpha 40, beta
    # inf, floor 1/64), the CPU's GAPBS's (15, 18, 0), so the reference takes the GPU's where
    # none is given
    cpus = [searcher_for(R, C, bsrc.get(), bdst.get(), layout, "2d-do", "cpu",
                         **{"alpha": merrill_do.ALPHA, "beta": merrill_do.BETA,
                            "floor": merrill_do.BOTTOM_UP_FLOOR,
                            **{k: v for k, v in o.items()
                               if k not in ("comm", "ahead", "td_ahead", "graphs", "peer",
                                            "fold")}})
            for o in option_sets]
    del bsrc, bdst
    seen = [{} for _ in option_sets]   # per option set: root -> (directions, edges examined)
    # the host's reads of the device: one a chain of levels, top-down or bottom-up, whatever its
    # length (its end, which also decides the next chain; td_ahead 0: a chain is one top-down
    # level); where the search returns to top-down (beta 18), also the compaction of In then
    cls = get_algorithm("2d-do").load("gpu").Fu2DDoGpu
    read_ctl = cls._read_ctl

    def counted(self, *where):
        self.reads = getattr(self, "reads", 0) + 1
        return read_ctl(self, *where)

    cls._read_ctl = counted

    def each(k, s, root):
        cpu = cpus[k]
        cpu.search(root)
        reads, s.reads = getattr(s, "reads", 0), 0
        looped = getattr(s, "peers", None) is not None    # reads and graphs: the loop's own
        if looped:      # scale 11's largest degree is under LOOP_DEGREE: the loop runs, and a
            # search it runs whole (every level top-down) reads the device once
            assert s.hubless and s.launches["loop"] > 0, (option_sets[k], s.launches)
            if set(s.directions) == {"top-down"}:
                assert reads == 1, (option_sets[k], root, reads, s.directions)
        if R * C > 1 and not looped:
            td, bu = s.directions.count("top-down"), s.directions.count("bottom-up")
            chains = -(-bu // (s.ahead + 1)) + -(-td // (s.td_ahead + 1))
            if "beta" in option_sets[k]:
                assert reads <= 2 * chains + 2, (option_sets[k], root, reads, s.directions)
            else:
                assert reads == chains, (option_sets[k], root, reads, s.directions)
        if R * C > 1 and not looped:   # graphs where every exchange is NCCL and not off
            replays = option_sets[k].get("graphs", 1) and s.comm_kind == "nccl"
            chained = s.td_ahead > 0 or "bottom-up" in s.directions   # any chain ran
            assert s.graphs == replays, option_sets[k]
            assert bool(s._captured) == bool(replays and chained), option_sets[k]
            # a replayed chain's levels timed apart by the device clock (LevelClock.split_chain)
            steps = s.profile_steps
            timed = steps[:len(s.directions), LevelClock.STEPS.index("chained")] > 0
            bottom_up = np.array([d == "bottom-up" for d in s.directions])
            assert (steps >= 0).all() and (timed[bottom_up] if replays else ~timed).all(), \
                (option_sets[k], root, s.directions, steps)
        mine = (s.directions, s.level_edges_examined, s.edges_examined)
        assert all(x == mine for x in comm.allgather(mine)), (option_sets[k], root)
        assert s.directions == cpu.directions, (option_sets[k], root, mine, cpu.directions)
        assert len(s.directions) == s.levels_run == len(s.level_edges_examined)
        assert s.edges_examined == sum(s.level_edges_examined)
        if "bottom-up" not in s.directions:
            assert s.level_edges_examined == cpu.level_edges_examined, (mine, cpu.directions)
        seen[k][root] = (s.directions, s.edges_examined)

    search_equals_cpu(R, C, "2d-do", option_sets, each)
    top_down, heavy, default, wave, one_level, chained, td_one, td_long, launched, \
        launched_back, whole, whole_mpi, whole_back, whole_launched, folded, folded_back, \
        looped, looped_back, looped_heavy, looped_top_down = seen
    # the level loop across GPUs: the directions and edges examined of the host's chains, from
    # the root (every level top-down until Beamer's rule), back from bottom-up, and handing the
    # search back to the host's bottom-up levels at once (alpha 1e9, no floor)
    assert looped == default and looped_back == chained and looped_heavy == heavy \
        and looped_top_down == top_down, (looped, default, looped_back, chained, looped_heavy,
                                          heavy, looped_top_down, top_down)
    assert all(set(d) == {"top-down"} for d, _ in top_down.values()), top_down
    assert all(d[:2] == ["top-down", "bottom-up"] for d, _ in heavy.values()), heavy
    assert any("bottom-up" in d for d, _ in default.values()), default
    for root, (d, examined) in default.items():
        if "bottom-up" in d:
            assert examined < top_down[root][1], (root, examined, top_down[root])
    assert [d for d, _ in wave.values()] == [d for d, _ in default.values()]
    # back to top-down decided on the device inside a chain as the host decides one level at
    # a time: the same directions and edges
    assert chained == one_level, (chained, one_level)
    # top-down levels sized on the device, in chains of 2 (the default) and 4, as one level at
    # a time sized by the host
    assert top_down == td_one == td_long, (top_down, td_one, td_long)
    # chains replayed as CUDA graphs (the default, NCCL) as launched one by one (graphs=0)
    assert default == launched and chained == launched_back, (default, launched)
    # bottom-up in sub-steps down the column (the default) against every rank over its whole
    # block (substeps=0): the same directions (the switch words do not depend on who finds a
    # vertex), and, a vertex searched on one rank after another until found, never more
    # in-edges read (the same on a grid of one row, where there is no column to step down);
    # through MPI, back to top-down and launched one by one alike
    for root, (d, examined) in whole.items():
        assert d == default[root][0], (root, d, default[root])
        assert default[root][1] <= examined if R > 1 else default[root][1] == examined, \
            (root, examined, default[root])
    assert [d for d, _ in whole_mpi.values()] == [d for d, _ in whole.values()]
    assert [d for d, _ in whole_back.values()] == [d for d, _ in chained.values()]
    assert whole_launched == whole, (whole_launched, whole)
    # In's fold (fold 1: made at every small-frontier bottom-up level, an eighth of In at
    # scale 11) changes no direction and no in-edge read
    assert folded == default and folded_back == chained, (folded, default, folded_back, chained)


def check_search_semiring(R, C):
    layout, (bsrc, bdst) = blocks_in_place(R, C)
    cpu = searcher_for(R, C, bsrc.get(), bdst.get(), layout, "semiring", "cpu")
    del bsrc, bdst

    def each(k, s, root):
        cpu.search(root)
        want, got = cpu.gather(2 ** SCALE), gathered(s)
        if rank == 0:
            assert (got.parent == want.parent).all() and (got.level == want.level).all(), root

    search_equals_cpu(R, C, "semiring", ({"comm": "nccl"}, {"comm": "mpi"}), each)


def check_search_csc(R, C):
    """2d-do adjacency=csc on the GPU grid: all top-down (alpha 1), bottom-up from level 1,
    the defaults, back to top-down (beta 18), through MPI: every search equals the CPU BFS and
    validates through the CSC (search_equals_cpu); every rank agrees on the directions and
    edges examined; the directions are the GPU's two-structure search's (the same switch
    words: m_f summed over CSC degrees is the frontier's degree sum) and the CPU's
    adjacency=csc's; a top-down level reads at least the frontier's edges (the push). The
    hub rows' parents carried by the push: every row (hub_degree 1, all top-down, and with
    the defaults), none (0), the default's few (auto). Small pushed levels sent as pairs
    (small_push: 2^18 takes every level of scale 11's 2^16 directed edges, 1000 some of them),
    or never (0, and auto at this scale, whose row bitmaps are under 16 MiB): the same
    searches."""
    option_sets = ({"alpha": 1.0, "hub_degree": 1, "small_push": 0}, {"alpha": 1e9}, {},
                   {"hub_degree": 1, "small_push": 0}, {"alpha": 1.0, "hub_degree": 0},
                   {"beta": 18.0}, {"comm": "mpi", "exchange": "wave"}, {"fold": 1},
                   {"fold": 1, "beta": 18.0}, {"alpha": 1.0, "small_push": 0},
                   {"alpha": 1.0, "small_push": 1000}, {"beta": 18.0, "small_push": 1000},
                   {"small_push": 2**18})
    layout, (bsrc, bdst) = blocks_in_place(R, C)
    cpus = [searcher_for(R, C, bsrc.get(), bdst.get(), layout, "2d-do", "cpu",
                         **{"alpha": merrill_do.ALPHA, "beta": merrill_do.BETA,
                            "floor": merrill_do.BOTTOM_UP_FLOOR,
                            "adjacency": "csc",
                            **{k: v for k, v in o.items()
                               if k not in ("comm", "hub_degree", "fold", "small_push")}})
            for o in option_sets]
    twos = [searcher_for(R, C, bsrc, bdst, layout, "2d-do", peer="off", **o)
            for o in option_sets]

    def each(k, s, root):
        assert s.csr_offsets is None and s.csr_cols is None and s.adjacency == "csc"
        if option_sets[k].get("hub_degree") == 1:      # every row of an edge is a hub row
            assert s.hubs is not None and s.hub_least == 1 and s.hub_caps.sum() > 0
        if option_sets[k].get("hub_degree") == 0:
            assert s.hubs is None
        # fold 1: In's fold is made and read (scale 11's row range: an eighth of In)
        assert (s.fold is not None) == (option_sets[k].get("fold") == 1)
        cpus[k].search(root)
        twos[k].search(root)
        mine = (s.directions, s.level_edges_examined, s.edges_examined)
        assert all(x == mine for x in comm.allgather(mine)), (option_sets[k], root)
        assert s.directions == cpus[k].directions == twos[k].directions, \
            (option_sets[k], root, s.directions, cpus[k].directions, twos[k].directions)
        for d, mine_e, two_e in zip(s.directions, s.level_edges_examined,
                                    twos[k].level_edges_examined):
            assert mine_e >= two_e if d == "top-down" else mine_e == two_e, \
                (option_sets[k], root, s.level_edges_examined, twos[k].level_edges_examined)

    search_equals_cpu(R, C, "2d-do", tuple({**o, "adjacency": "csc"} for o in option_sets),
                      each)
    for t in twos:
        t.close()


def search_equals_cpu(R, C, algorithm, option_sets, each=None) -> list:
    """Each option set's searches from 5 roots equal the CPU BFS and validate on the GPUs
    (by bfs.validate.grid_gpu, with the CPU validator's nedge); each(k, searcher, root), where
    given, is called on every rank after each search of option set k. Returns, per option set,
    which exchanges 1d's searches used (1 where any level used that kind)."""
    layout, (bsrc, bdst) = blocks_in_place(R, C)
    src, dst = generate_edges(SCALE, EF)
    n = 2 ** SCALE
    csr = build_csr(src, dst, n)
    roots = [int(r) for r in np.flatnonzero(np.diff(csr.offsets))[::397][:5]]
    used = []
    for k, options in enumerate(option_sets):
        s = searcher_for(R, C, bsrc, bdst, layout, algorithm, **options)
        kinds = {"bitmap": 0, "list": 0}
        for root in roots:
            s.search(root)
            for kind, levels in getattr(s, "exchanges", {}).items():
                kinds[kind] |= levels > 0
            verdict = validate_grid_device(s.grid_view(), root, comm, s.world_x, s.row_x,
                                           s.col_x)
            res = gathered(s)
            if rank == 0:
                _, level = bfs_csr(csr.offsets, csr.columns, root)
                assert (res.level == level).all(), (options, root)
                ref = validate(src, dst, res.parent, root, res.level)
                assert ref.valid, ref.message
                assert verdict.valid and verdict.nedge == ref.nedge, (verdict, ref)
                assert verdict.depth == ref.depth and verdict.reached == ref.reached
            assert verdict.valid, verdict.message
            if each is not None:
                each(k, s, root)
        s.close()    # its communicators (and first 2d-do's CUDA graphs, which hold them)
        used.append(kinds)
    return used


def check_streamed(R, C):
    from bfs.build.routing import RoutedBlock
    n = 2 ** SCALE
    graph = GeneratedKronecker(SCALE, EF)
    src, dst = generate_edges(SCALE, EF)
    csr = build_csr(src, dst, n)
    roots = [int(r) for r in np.flatnonzero(np.diff(csr.offsets))[::397][:3]]
    for algorithm, (rows, cols) in (("2d", (R, C)), ("2d-do", (R, C)),
                                    ("1d", (R * C, 1))):
        layout = GridLayout(n, rows, cols)
        routed = RoutedBlock(comm, layout, graph.n_edges, graph.device_edges,
                             chunk=777)   # many chunks, the last ones short
        entries, mark, placed = routed.survey(n)
        whole_src, whole_dst = route_to_blocks(layout, *graph.device_edges(
            *graph.share(rank, comm.Get_size())), routed.exchange)
        assert entries == whole_src.size and placed["edge_list"] == "streamed"
        want = cp.zeros(n, cp.bool_)
        want[whole_src[whole_src != whole_dst]] = True
        assert (mark == want).all()
        manifest = {"grid": [rows, cols], "bounds": layout.bounds.tolist(), "n_vertices": n}
        spec = get_algorithm(algorithm).load("gpu")
        whole = spec.build(Block(comm, manifest, whole_src, whole_dst), RunContext("gpu", {}))
        streamed = spec.build(Block(comm, manifest, None, None, routed.chunks),
                              RunContext("gpu", {}))
        assert routed.passes == 1 + (4 if algorithm == "2d-do" else 2), routed.passes
        for name in ("csr_offsets", "csr_cols", "csc_offsets", "csc_rows"):
            if hasattr(whole, name):
                assert (getattr(whole, name) == getattr(streamed, name)).all(), (algorithm, name)
        for root in roots:
            for s in (whole, streamed):
                s.search(root)
                verdict = validate_grid_device(s.grid_view(), root, comm, s.world_x, s.row_x,
                                               s.col_x)
                assert verdict.valid, (algorithm, verdict.message)
                res = gathered(s)
                if rank == 0:
                    assert (res.level == bfs_csr(csr.offsets, csr.columns, root)[1]).all()
        routed.free()


def check_faults(R, C):
    layout, (bsrc, bdst) = blocks_in_place(R, C)
    s = searcher_for(R, C, bsrc, bdst, layout)
    src, dst = generate_edges(SCALE, EF)
    csr = build_csr(src, dst, 2 ** SCALE)
    root = int(np.argmax(np.diff(csr.offsets)))
    own = slice(s.own.start * 64, s.own.stop * 64)
    for faulty in range(comm.Get_size()):
        for fault, rule in (("level", 2), ("parent-range", 1), ("parent-far", 5),
                            ("unreached", 4)):
            s.search(root)
            if rank == faulty:
                lv = s.level_col[own].get()
                pred = s.pred.get()
                reached = np.flatnonzero(lv > 1) + own.start
                v = int(reached[len(reached) // 2])
                if fault == "level":          # a reached vertex one level too deep
                    s.level_col[v] = int(lv[v - own.start]) + 1
                elif fault == "parent-range":  # a parent that is no vertex
                    assigned = np.flatnonzero(pred >= 0)
                    s.pred[int(assigned[0])] = 2 ** SCALE + 7
                elif fault == "parent-far":   # a parent that is the root, not a neighbour
                    assigned = np.flatnonzero(pred >= 0)
                    far = [a for a in assigned if s.level_col[int(a)].get() > 1]
                    s.pred[int(far[0])] = root
                else:                          # a reached vertex reported unreached
                    s.level_col[v] = -1
            verdict = validate_grid_device(s.grid_view(), root, comm, s.world_x, s.row_x,
                                           s.col_x)
            assert not verdict.valid, (fault, faulty)
            if fault != "parent-far":
                assert verdict.rule in (rule, 2, 3, 4), (fault, faulty, verdict)
            else:
                assert verdict.rule in (2, 5), (fault, faulty, verdict)
            if rank == 0:
                print(f"fault {fault} on rank {faulty}: {verdict.message}", flush=True)


def check_share(R, C):
    """PeerShare over the whole world as one grid row (see the module docstring), pieces of
    uneven lengths."""
    from bfs import device
    from bfs.comm import peer
    P = comm.Get_size()
    counts = np.array([1000 + 37 * j for j in range(P)], np.int64)
    displs = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
    n = int(counts.sum())
    share = peer.PeerShare.open("on", comm, n, displs, counts)
    assert share is not None, "peer=on opened no window"
    rng = np.random.default_rng(rank)
    go, stop = cp.ones(1, cp.uint64), cp.zeros(1, cp.uint64)

    def piece_of(density):
        words = rng.integers(1, 2**63, int(counts[rank]), dtype=np.uint64)
        return words * (rng.random(int(counts[rank])) < density).astype(np.uint64)

    def expect(piece):
        whole = np.empty(n, np.uint64)
        comm.Allgatherv(piece, [whole, counts, displs, MPI.UINT64_T])
        return whole

    def same(level):
        share.enqueue_error_read()
        got = share.words.get()
        assert share.error() == "", share.error()
        return got

    def words_sum(words, totals):
        expected = np.empty(4, np.uint64)
        comm.Allreduce(words, expected, op=MPI.SUM)
        got = totals.get()
        assert (got == expected).all(), (rank, got, expected)

    totals = cp.zeros(4, cp.uint64)
    for level, density in enumerate((0.0, 0.001, 0.3, 1.0, 0.01)):
        piece = piece_of(density)
        share.share(cp.asarray(piece), go, level)
        assert (same(level) == expect(piece)).all(), (rank, density)
        # the switch words, summed by the same flags: twice in a row too (the slots' parity)
        for _ in range(1 + level % 2):
            words = rng.integers(0, 2**40, 4, dtype=np.uint64)
            share.sum(cp.asarray(words), totals, go, level)
            words_sum(words, totals)
    before, summed = same(5), totals.get()
    share.share(cp.asarray(piece_of(0.5)), stop, 5)       # a level that does not run
    share.sum(cp.asarray(piece_of(1.0)[:4]), totals, stop, 5)
    assert (same(5) == before).all() and (totals.get() == summed).all()
    dev = cp.zeros(int(counts[rank]), cp.uint64)
    dev_words = cp.zeros(4, cp.uint64)

    def enqueue():
        share.share(dev, go, 6)
        share.sum(dev_words, totals, go, 6)

    graph, _ = device.GraphCapture().capture(enqueue)
    for density in (0.2, 0.0, 1.0):
        piece = piece_of(density)
        words = rng.integers(0, 2**40, 4, dtype=np.uint64)
        dev[...] = cp.asarray(piece)
        dev_words[...] = cp.asarray(words)
        graph.launch()
        assert (same(6) == expect(piece)).all(), (rank, density, "graph")
        words_sum(words, totals)
        assert share.error() == "", share.error()
    comm.Barrier()
    # the last rank stays away: the others leave their wait, naming it and the level
    peer.SHARE_TIMEOUT_S = 0.5
    if rank != P - 1:
        share.share(cp.asarray(piece_of(0.1)), go, 7)
        share.enqueue_error_read()
        cp.cuda.get_current_stream().synchronize()
        message = share.error()
        assert f"level 7: rank {P - 1} did not arrive" in message, message
    comm.Barrier()
    share.close()


if __name__ == "__main__":
    check, R, C = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    select_gpu(rank)
    try:
        globals()[f"check_{check}"](R, C)
    except Exception:
        import traceback
        traceback.print_exc()
        sys.stdout.flush()
        comm.Abort(1)
    comm.Barrier()
    if rank == 0:
        print(f"ok {check} {R}x{C}", flush=True)
