"""A toy algorithm outside the package, for the registry hook (BFS_EXTRA_ALGORITHMS=toy_algorithm
with tests/ on PYTHONPATH): seq-csr under another name, with one sweepable option, `hops`, that
it records and otherwise ignores, and a setting it resolves at build time (`walk`: "long" past
four hops), recorded as resolved. Its entry is all a new algorithm declares; tests check that
`bfs run`, NAME@KEY=VALUE, the config schema and the workflow's run ids all see it."""
from bfs.algorithms import AlgorithmSpec
from bfs.algorithms.options import Option, positive_int
from bfs.algorithms.seq_csr import build as build_seq_csr

HOPS = Option("hops", "a toy setting, recorded in run.json", parse=positive_int, default=2,
              metavar="H", flag=True, sweep=True, id_prefix="h", id_pattern="[0-9]+")

ALGORITHMS = [AlgorithmSpec("toy", {"cpu": "toy_algorithm"}, "seq-csr with a sweepable toy option",
                            options=(HOPS,))]


def build(graph, ctx):
    if not isinstance(ctx.options.get("hops"), int):
        raise TypeError(f"hops reached the module as {ctx.options.get('hops')!r}, not an int")
    searcher = build_seq_csr(graph, ctx)
    searcher.walk = "long" if ctx.options["hops"] > 4 else "short"
    searcher.resolved_options = ("walk",)       # run.json records it as resolved
    return searcher
