"""The GPU-box workflow's config (bench/device.sh box): a workflow config (default
config/gpu_box.yaml) rewritten to run its scaling experiments at two chosen Kronecker scales,
consistently, so that the result passes the workflow's own checks (the schema and
workflow/rules/common.smk's check_graph_names & co.).

    python3 bench/box_config.py CONFIG OUT S1 S2 ROOTS [--weak W1 W2 W3 ...]

- The config's Kronecker graphs are replaced by kron-s<S1> and kron-s<S2>; each keeps the
  settings (edgefactor, in_place, ...) of the graph whose role it takes, at its own scale.
- Weak scaling (every experiment of that kind): kron-s<S1> on 1 rank, kron-s<S2> on 2; with
  --weak, kron-s<Wk> on 2^(k-1) ranks of a 1 x 2^(k-1) grid (the box's 1xP grids: W1 on one
  GPU, W2 on 1x2, W3 on 1x4, ...), the graphs past S1 and S2 with S2's settings.
- Strong scaling: both graphs (an experiment of lattice or SNAP graphs alone, the road-like
  scaling, stays as it is).
- Every other experiment: a graph that weak or strong scaling used is renamed to the graph
  taking its role (weak scaling's first point -> S1, its second -> S2; then strong scaling's
  graphs in order); a graph that was dropped (a Kronecker graph with no role: hybrid's
  lambda-sweep graphs, ...) is left out, and an experiment left with no graph is dropped.
  Lattice and SNAP graphs stay as they are.
- results: results, roots: ROOTS.

What was renamed or dropped is said on stderr.
"""
from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

import yaml

STRONG, WEAK = "strong_scaling", "weak_scaling"


def kind(name: str, exp: dict) -> str:
    return exp.get("kind", name)


def graph_refs(exp: dict) -> list[str]:
    """The graphs an experiment names: `graph`, `graphs` and its weak-scaling points'."""
    refs = [exp["graph"]] if "graph" in exp else []
    refs += list(exp.get("graphs", []))
    refs += [p["graph"] for p in exp.get("points", [])]
    return refs


def roles(experiments: dict, g1: str, g2: str, kronecker) -> dict[str, str]:
    """old graph name -> the new graph that takes its role (weak scaling first); only the
    config's Kronecker graphs (`kronecker`, their names) take one."""
    renamed: dict[str, str] = {}
    for name, exp in experiments.items():
        if kind(name, exp) == WEAK:
            points = sorted(exp.get("points", []), key=lambda p: p.get("ranks", 0))
            for point, new in zip(points, (g1, g2)):
                renamed.setdefault(point["graph"], new)
    for name, exp in experiments.items():
        if kind(name, exp) == STRONG:
            old = [graph for graph in graph_refs(exp) if graph in kronecker]
            for graph, new in zip(old, (g1, g2) if len(old) > 1 else (g2,)):
                renamed.setdefault(graph, new)
    return renamed


def weak_points(scales: list[int]) -> list[dict]:
    """Weak scaling's points at `scales`: the k-th (from 0) on 2^k ranks, a 1 x 2^k grid."""
    return [{"ranks": 2 ** k, "graph": f"kron-s{scale}",
             **({"grid": f"1x{2 ** k}"} if k else {})} for k, scale in enumerate(scales)]


def box_config(config: dict, s1: int, s2: int, roots: int,
               log=lambda text: print(f"box_config: {text}", file=sys.stderr),
               weak: list[int] | None = None) -> dict:
    """The rewritten config (config itself is left as it is)."""
    if s1 == s2:
        raise ValueError(f"S1 and S2 must differ (both {s1})")
    if weak is not None and (len(weak) < 2 or len(set(weak)) < len(weak)):
        raise ValueError(f"--weak takes two or more different scales, got {weak}")
    c = copy.deepcopy(config)
    c.update(results="results", roots=roots)
    g1, g2 = f"kron-s{s1}", f"kron-s{s2}"
    experiments = c.get("experiments", {})
    kronecker = c.setdefault("graphs", {}).get("kronecker") or {}
    renamed = roles(experiments, g1, g2, kronecker)
    # the new graphs, each with the settings of the first graph whose role it takes
    new_graphs = {}
    for new, scale in ((g1, s1), (g2, s2)):
        like = next((kronecker[old] for old, n in renamed.items()
                     if n == new and old in kronecker), {})
        new_graphs[new] = {"edgefactor": 16, **like, "scale": scale}
    for scale in weak or ():      # weak scaling's graphs past S1 and S2: S2's settings
        new_graphs.setdefault(f"kron-s{scale}", {**new_graphs[g2], "scale": scale})
    c["graphs"]["kronecker"] = new_graphs
    dropped_graphs = sorted(set(kronecker) - set(renamed) - set(new_graphs))
    if dropped_graphs:
        log(f"Kronecker graphs dropped: {', '.join(dropped_graphs)}")
    defined = set(new_graphs) | {g for key, graphs in c["graphs"].items()
                                 if key != "kronecker" and isinstance(graphs, dict)
                                 for g in graphs}
    for name in list(experiments):
        exp = experiments[name]
        if kind(name, exp) == STRONG and any(g in kronecker for g in graph_refs(exp)):
            exp.pop("graph", None)
            exp["graphs"] = [g1, g2]
        elif kind(name, exp) == WEAK:
            exp["points"] = weak_points(weak) if weak else [{"ranks": 1, "graph": g1},
                                                             {"ranks": 2, "graph": g2}]
        else:
            kept = []
            for graph in graph_refs(exp):
                graph = renamed.get(graph, graph)
                if graph in defined and graph not in kept:
                    kept.append(graph)
            if not kept:
                log(f"experiments.{name} dropped: none of its graphs "
                    f"({', '.join(graph_refs(exp))}) is in the rewritten config")
                del experiments[name]
                continue
            if kept != graph_refs(exp):
                log(f"experiments.{name}: graphs {graph_refs(exp)} -> {kept}")
            if "graph" in exp and len(kept) == 1:
                exp["graph"] = kept[0]
            else:
                exp.pop("graph", None)
                exp["graphs"] = kept
    return c


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("config", type=Path, help="the workflow config to rewrite")
    p.add_argument("out", type=Path, help="where the rewritten config goes")
    p.add_argument("s1", type=int, help="the smaller scale (weak scaling on 1 rank)")
    p.add_argument("s2", type=int, help="the larger scale (weak scaling on 2 ranks)")
    p.add_argument("roots", type=int, help="searches per run")
    p.add_argument("--weak", type=int, nargs="+", metavar="W",
                   help="weak scaling's scales on 1, 2, 4, ... ranks (1xP grids; default S1 "
                        "on 1, S2 on 2)")
    a = p.parse_args(argv)
    config = yaml.safe_load(a.config.read_text())
    try:
        rewritten = box_config(config, a.s1, a.s2, a.roots, weak=a.weak)
    except ValueError as e:
        print(f"box_config: {e}", file=sys.stderr)
        return 2
    a.out.write_text(yaml.safe_dump(rewritten, sort_keys=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
