"""Can a road-like search on P GPUs meet every K levels instead of every level? Ghost zones:
each rank holds its own block of vertex ids and, beside them, every vertex within K hops (the
halo) with its edges; from a state exact at level d it runs K levels alone (its own vertices
come out exact: a shortest path of at most K steps to one of them lies in its vertices and
halo), then the ranks meet once: each sends the levels of its own vertices that others hold in
their halos, and the next round starts from the own part of its last frontier plus the halo
vertices their owners reached at d + K. A level-synchronous search across GPUs meets every
level (~7.3 us a level on two H200s against one GPU's ~4.2, BENCHMARKS.md); this meets
levels / K times.

It needs a numbering with locality: a lattice numbered row by row (ordered), whose blocks of
ids are bands of rows with a K-row halo. (The tool's lattice, like a road graph as published,
is numbered at random, where the halo of a block is the whole graph: a Kernel 1 renumbering by
BFS bands would come first.)

One process, P ranks, rank j on GPU j % (GPUs visible); each rank's K levels are level_loop.cu's
level_loop (merrill-do's loop, the spread on) over the rank's local CSR, the rounds driven by
the host (a launch, a pack, peer copies, a merge and one read a rank a round). The probe reads
the whole graph to build the halos (a product would exchange them at Kernel 1). Every search's
levels are checked against the CPU's, and its tree by the Graph500 rules (bfs.validate).
merrill-do on GPU 0 over the same graph is timed beside it, the same way (host wall time
around a search, after an untimed one from the same root).

    PYTHONPATH=. python3 bench/probes/halo_rounds.py SIDE P K[,K...] [ROOTS]   # GPU
    PYTHONPATH=. python3 bench/probes/halo_rounds.py SIDE P K[,K...] [ROOTS] --cpu
    (--cpu: the same rounds with the levels and the merge in NumPy, to check the logic)
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from bfs.algorithms.seq_csr import bfs_csr
from bfs.build.csr_cpu import build_csr
from bfs.graphs.lattice import lattice_edges
from bfs.validate import validate


def neighbours(offsets, columns, vertices):
    """Every neighbour of the given vertices (with repeats)."""
    starts, ends = offsets[vertices], offsets[vertices + 1]
    lengths = ends - starts
    index = np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(lengths.sum())
    return columns[index]


class RankPlan:
    """Rank j's vertices: own block [lo, hi) first, then its K-hop halo (sorted); its local CSR
    over them; and what it sends (own local ids) and takes (halo local ids) at a meeting."""

    def __init__(self, offsets, columns, lo, hi, k):
        n = offsets.size - 1
        inside = np.zeros(n, bool)
        inside[lo:hi] = True
        ring = np.arange(lo, hi)
        halo = []
        for _ in range(k):
            nb = np.unique(neighbours(offsets, columns, ring))
            ring = nb[~inside[nb]]
            if ring.size == 0:
                break
            inside[ring] = True
            halo.append(ring)
        halo = np.sort(np.concatenate(halo)) if halo else np.empty(0, np.int64)
        self.lo, self.hi, self.n_own = lo, hi, hi - lo
        self.vertices = np.concatenate([np.arange(lo, hi), halo]).astype(np.int64)
        self.halo = halo
        local = np.full(n, -1, np.int64)
        local[self.vertices] = np.arange(self.vertices.size)
        self.local = local
        nbr = neighbours(offsets, columns, self.vertices)
        rows = np.repeat(np.arange(self.vertices.size), np.diff(offsets)[self.vertices])
        cols = local[nbr]
        keep = cols >= 0
        rows, cols = rows[keep], cols[keep]
        self.offsets = np.zeros(self.vertices.size + 1, np.int64)
        np.cumsum(np.bincount(rows, minlength=self.vertices.size), out=self.offsets[1:])
        self.columns = cols.astype(np.uint32)     # rows came in order: already grouped


def plan_meetings(plans):
    """For each rank t, the sources j and, per source, (own local ids in j, halo local ids in
    t) of j's own vertices that lie in t's halo."""
    meet = []
    for t, pt in enumerate(plans):
        segments = []
        for j, pj in enumerate(plans):
            if j == t:
                continue
            mine = pt.halo[(pt.halo >= pj.lo) & (pt.halo < pj.hi)]
            if mine.size:
                segments.append((j, pj.local[mine], pt.local[mine]))
        meet.append(segments)
    return meet


class CpuRank:
    """The rounds' steps in NumPy (the logic check)."""

    def __init__(self, plan):
        self.p = plan
        n = plan.vertices.size
        self.level, self.parent = np.full(n, -1, np.int64), np.full(n, -1, np.int64)
        self.visited = np.zeros(n, bool)
        self.queue = np.empty(0, np.int64)

    def reset(self, root_local):
        self.level[:] = -1
        self.parent[:] = -1
        self.visited[:] = False
        self.queue = np.empty(0, np.int64)
        if root_local >= 0:
            self.level[root_local], self.parent[root_local] = 0, root_local
            self.visited[root_local] = True
            self.queue = np.array([root_local])

    def levels(self, d, k):
        p, f = self.p, self.queue
        for s in range(k):
            if f.size == 0:
                break
            deg = np.diff(p.offsets)[f]
            src = np.repeat(f, deg)
            dst = neighbours(p.offsets, p.columns.astype(np.int64), f)
            fresh = ~self.visited[dst]
            dst, src = dst[fresh], src[fresh]
            new, first = np.unique(dst, return_index=True)
            self.visited[new] = True
            self.level[new], self.parent[new] = d + s + 1, src[first]
            f = new
        self.queue = f

    def merge(self, got, halo_ids, next_level):
        reached = got >= 0
        self.visited[halo_ids[reached]] = True
        self.level[halo_ids[reached]] = got[reached]
        own = self.queue[self.queue < self.p.n_own]
        self.queue = np.concatenate([own, halo_ids[got == next_level]])
        return self.queue.size


def run_cpu(plans, meet, k, root):
    ranks = [CpuRank(p) for p in plans]
    for r in ranks:
        r.reset(int(r.p.local[root]))
    d = 0
    while True:
        for r in ranks:
            r.levels(d, k)
        q = 0
        for t, r in enumerate(ranks):
            got = [ranks[j].level[send] for j, send, _ in meet[t]]
            ids = [take for _, _, take in meet[t]]
            got = np.concatenate(got) if got else np.empty(0, np.int64)
            ids = np.concatenate(ids) if ids else np.empty(0, np.int64)
            q += r.merge(got, ids, d + k)
        d += k
        if q == 0:
            break
    return [global_outputs(r.p, r.level[:r.p.n_own], r.parent[:r.p.n_own]) for r in ranks]


def global_outputs(plan, level, parent):
    """A rank's own levels and its parents as global ids (-1: not reached)."""
    return (np.asarray(level, np.int64),
            np.where(parent >= 0, plan.vertices[np.maximum(parent, 0)], -1))


class GpuRank:
    """Rank j's device state on GPU `dev` and its kernels."""

    streams: dict = {}   # one stream a GPU: ranks sharing a GPU take turns, as two level
                         # loops on one GPU at once would not all be resident for their barriers

    def __init__(self, plan, dev, cp, merrill):
        self.p, self.dev, self.cp = plan, dev, cp
        with cp.cuda.Device(dev):
            if dev not in GpuRank.streams:
                GpuRank.streams[dev] = cp.cuda.Stream(non_blocking=True)
            self.stream = GpuRank.streams[dev]
            loop = merrill.loop_module()
            self.k_loop = loop.get_function("level_loop")
            mod = cp.RawModule(code=Path(__file__).with_name("halo_rounds.cu").read_text())
            self.k = {f: mod.get_function(f) for f in ("halo_reset", "halo_pack", "halo_merge")}
            n = plan.vertices.size
            self.n = n
            self.offsets = cp.asarray(plan.offsets)
            self.columns = cp.asarray(plan.columns)
            self.queues = [cp.zeros(n + 1, cp.uint32) for _ in range(3)]
            self.degrees = [cp.zeros(n + 1, cp.int64) for _ in range(3)]
            slots = merrill.loop_slots(n)
            self.starts = (cp.zeros(slots, cp.int64), cp.zeros(slots, cp.int64))
            self.ctl = cp.zeros(8, cp.uint64)
            self.state = cp.zeros((2, 32), cp.uint64)
            self.count = cp.zeros(2, cp.uint64)
            self.parent = cp.empty(n, cp.int64)
            self.level = cp.empty(n, cp.int32)
            self.n_words = n // 32 + 1
            self.visited = cp.zeros(self.n_words, cp.uint32)
            self.blocks = merrill.loop_grid(self.k_loop, 0)
            import cupyx
            self.host_q = cupyx.empty_pinned((2,), np.uint64)

    def place_meetings(self, segments, senders):
        """segments: this rank's (source, send ids there, halo ids here); senders[j] fills."""
        cp = self.cp
        with cp.cuda.Device(self.dev):
            ids = [take for _, _, take in segments]
            self.halo_ids = cp.asarray(np.concatenate(ids).astype(np.uint32)
                                       if ids else np.zeros(1, np.uint32))
            self.m = sum(t.size for t in ids)
            self.got = cp.zeros(max(self.m, 1), cp.int32)
        at = 0
        self.sources = []
        for j, send, take in segments:
            self.sources.append((j, senders[j].add_send(send), at, take.size))
            at += take.size

    def init_sends(self):
        self.send_lists, self.send_at = [], 0

    def add_send(self, send):
        at = self.send_at
        self.send_lists.append(send)
        self.send_at += send.size
        return at

    def finish_sends(self):
        cp = self.cp
        with cp.cuda.Device(self.dev):
            ids = np.concatenate(self.send_lists) if self.send_lists else np.zeros(1, np.int64)
            self.send_ids = cp.asarray(ids.astype(np.int64))
            self.send_m = int(sum(s.size for s in self.send_lists))
            self.send_buf = cp.zeros(max(self.send_m, 1), cp.int32)

    def reset(self, root_local):
        cp = self.cp
        with cp.cuda.Device(self.dev), self.stream:
            n = max(self.n, self.n_words, 64)
            self.k["halo_reset"]((min(1024, (n + 255) // 256),), (256,),
                                 (np.int64(self.n), np.int64(self.n_words), self.visited,
                                  self.level, self.parent, self.queues[0], self.degrees[0],
                                  self.offsets, np.int64(root_local), self.state,
                                  np.int64(self.state.size), self.count))
        self.q = 1 if root_local >= 0 else 0

    def loop(self, r, d, k, merrill, spread):
        if not self.q:
            return
        cp = self.cp
        a, b = (2 * r) % 3, (2 * r + 1) % 3
        with cp.cuda.Device(self.dev), self.stream:
            self.k_loop((self.blocks,), (256,),
                        (self.offsets, self.columns, self.queues[a], self.queues[b],
                         self.degrees[a], self.degrees[b], self.starts[0], self.starts[1],
                         np.int64(self.q), np.int32(d), np.int64(merrill.LOOP_Q),
                         np.int64(merrill.LOOP_E), np.int64(merrill.LOOP_DEGREE),
                         np.int32(k), np.float64(0.0), np.int64(0), np.int64(0), np.int64(0),
                         self.ctl, self.state[r & 1], np.uint64(10 * 10**9), self.parent,
                         self.level, self.visited, np.uint64(0), np.uint64(0),
                         np.int32(spread)))

    def pack(self):
        cp = self.cp
        with cp.cuda.Device(self.dev), self.stream:
            if self.send_m:
                self.k["halo_pack"]((min(1024, (self.send_m + 255) // 256),), (256,),
                                    (self.level, self.send_ids, np.int64(self.send_m),
                                     self.send_buf))
            self.packed = self.stream.record()

    def take(self, ranks):
        cp = self.cp
        with cp.cuda.Device(self.dev):
            for j, at_src, at, size in self.sources:
                src = ranks[j]
                self.stream.wait_event(src.packed)
                cp.cuda.runtime.memcpyPeerAsync(self.got.data.ptr + 4 * at, self.dev,
                                                src.send_buf.data.ptr + 4 * at_src, src.dev,
                                                4 * size, self.stream.ptr)

    def merge(self, r, next_level):
        cp = self.cp
        a, b, c = (2 * r) % 3, (2 * r + 1) % 3, (2 * r + 2) % 3
        with cp.cuda.Device(self.dev), self.stream:
            items = max(self.n + self.m, 64)     # the round's queue is at most n
            self.k["halo_merge"]((min(1024, (items + 255) // 256),), (256,),
                                 (self.state[r & 1], self.queues[a], self.queues[b],
                                  np.int64(self.p.n_own), self.got, self.halo_ids,
                                  np.int64(self.m), np.int32(next_level), self.visited,
                                  self.level, self.offsets, self.queues[c], self.degrees[c],
                                  self.count[r & 1:], self.state[(r + 1) & 1],
                                  np.int64(32), self.count[(r + 1) & 1:]))
            cp.cuda.runtime.memcpyAsync(self.host_q.ctypes.data, self.count.data.ptr, 16,
                                        cp.cuda.runtime.memcpyDeviceToHost, self.stream.ptr)

    def read(self, r):
        self.stream.synchronize()
        self.q = int(self.host_q[r & 1])
        return self.q


def run_gpu(ranks, k, root, merrill, spread):
    for g in ranks:
        g.reset(int(g.p.local[root]))
    d, r = 0, 0
    while True:
        for g in ranks:
            g.loop(r, d, k, merrill, spread)
        for g in ranks:
            g.pack()
        for g in ranks:
            g.take(ranks)
        for g in ranks:
            g.merge(r, d + k)
        q = sum(g.read(r) for g in ranks)
        d += k
        r += 1
        if q == 0:
            return r


def gather_gpu(ranks):
    out = []
    for g in ranks:
        with g.cp.cuda.Device(g.dev):
            out.append(global_outputs(g.p, g.level[:g.p.n_own].get(),
                                      g.parent[:g.p.n_own].get()))
    return out


def check(parts, plans, offsets, columns, src, dst, root):
    """Levels equal the CPU's, and the tree passes the Graph500 rules (bfs.validate)."""
    n = offsets.size - 1
    _, ref = bfs_csr(offsets, columns, root)
    level, parent = np.empty(n, np.int64), np.empty(n, np.int64)
    for (lv, pa), p in zip(parts, plans):
        level[p.lo:p.hi], parent[p.lo:p.hi] = lv, pa
    assert np.array_equal(level, np.asarray(ref, np.int64)), \
        f"root {root}: levels differ at {np.flatnonzero(level != ref)[:5]}"
    verdict = validate(src, dst, parent, root, level.astype(np.int32))
    assert verdict.valid, f"root {root}: {verdict.message}"


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    cpu = "--cpu" in sys.argv
    side, P = int(args[0]), int(args[1])
    ks = [int(x) for x in args[2].split(",")]
    n_roots = int(args[3]) if len(args) > 3 else 8
    src, dst, n = lattice_edges(side, side, ordered=True)
    csr = build_csr(src.astype(np.int64), dst.astype(np.int64), n)
    offsets, columns = np.asarray(csr.offsets, np.int64), np.asarray(csr.columns, np.int64)
    rng = np.random.default_rng(7)
    roots = [int(x) for x in rng.choice(n, n_roots, replace=False)]
    bounds = [n * j // P for j in range(P + 1)]
    print(f"ordered lattice {side}x{side}, {n} vertices, {P} ranks, roots {roots}")
    if not cpu:
        import cupy as cp
        from bfs.algorithms import EdgeList, RunContext, get_algorithm
        from bfs.algorithms import merrill
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # bench/'s harness
        from kronecker_searcher import wall_times
        gpus = cp.cuda.runtime.getDeviceCount()
        for a in range(gpus):
            for b in range(gpus):
                if a != b:
                    with cp.cuda.Device(a):
                        try:
                            cp.cuda.runtime.deviceEnablePeerAccess(b)
                        except cp.cuda.runtime.CUDARuntimeError:
                            pass
        with cp.cuda.Device(0):
            one = get_algorithm("merrill-do").load("gpu").build(EdgeList(src, dst, n),
                                                               RunContext("gpu", {}))
            base = float(np.median(wall_times(one, roots)))
            print(f"merrill-do, one GPU: median {base * 1e3:.3f} ms a search")
    for k in ks:
        t0 = time.perf_counter()
        plans = [RankPlan(offsets, columns, bounds[j], bounds[j + 1], k) for j in range(P)]
        meet = plan_meetings(plans)
        sizes = [p.vertices.size - p.n_own for p in plans]
        print(f"K={k}: halos {sizes} vertices (own {plans[0].n_own}), plan "
              f"{time.perf_counter() - t0:.1f} s")
        if cpu:
            for root in roots:
                check(run_cpu(plans, meet, k, root), plans, offsets, columns, src, dst, root)
            print(f"K={k}: every level and parent checked (NumPy rounds)")
            continue
        ranks = [GpuRank(p, j % gpus, cp, merrill) for j, p in enumerate(plans)]
        for g in ranks:
            g.init_sends()
        for g, segs in zip(ranks, meet):
            g.place_meetings(segs, ranks)
        for g in ranks:
            g.finish_sends()
        for spread in (1, 0):
            times, rounds = [], 0
            for root in roots:
                run_gpu(ranks, k, root, merrill, spread)
                check(gather_gpu(ranks), plans, offsets, columns, src, dst, root)
                t = time.perf_counter()
                rounds = run_gpu(ranks, k, root, merrill, spread)
                times.append(time.perf_counter() - t)
            med = float(np.median(times))
            print(f"K={k} spread={spread}: median {med * 1e3:.3f} ms a search = "
                  f"{med / base:.2f}x one GPU ({rounds} rounds in the last; all checked)")
        del ranks


if __name__ == "__main__":
    main()
