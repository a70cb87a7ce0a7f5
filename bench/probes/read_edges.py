"""One pass over a graph directory's edge list (graphdir.iter_edge_batches), timed per reader
thread count, the counts interleaved, median of ROUNDS.

    PYTHONPATH=. python bench/probes/read_edges.py GRAPH_DIR [ROUNDS] [THREADS...]

Prints each thread count's median seconds and edges per second; the edges are counted against
graph.json. On a warm page cache this is the decode rate, which bounds every streamed pass of
`bfs run GRAPH_DIR` (Kernel 1's two, one per validation)."""
import statistics
import sys
import time

from bfs.graphs.graphdir import iter_edge_batches, read_meta


def main() -> None:
    graph_dir = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    counts = [int(t) for t in sys.argv[3:]] or [1, 2, 4, 8]
    m = read_meta(graph_dir).n_edges
    times = {t: [] for t in counts}
    for _ in range(rounds):
        for t in counts:
            start, seen = time.perf_counter(), 0
            for src, _ in iter_edge_batches(graph_dir, 1 << 24, t):
                seen += len(src)
            times[t].append(time.perf_counter() - start)
            if seen != m:
                sys.exit(f"{graph_dir}: read {seen} edges, graph.json says {m}")
    for t in counts:
        med = statistics.median(times[t])
        print(f"threads {t}: median {med:.3f} s, {m / med / 1e6:.0f} M edges/s "
              f"({', '.join(f'{x:.2f}' for x in times[t])})")


if __name__ == "__main__":
    main()
