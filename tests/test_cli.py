"""The CLI end to end on small graphs, in process: exit codes, files, messages."""
import json

import numpy as np
import pyarrow.parquet as pq
import pytest

from bfs.algorithms import ALGORITHMS, AlgorithmSpec
from bfs.cli import main
from bfs.errors import BfsError
from helpers import SNAP_DIR


@pytest.fixture(scope="module")
def kron10(tmp_path_factory):
    out = tmp_path_factory.mktemp("g") / "kron10"
    assert main(["generate", "kronecker", "--scale", "10", "--out", str(out)]) == 0
    return out


def test_graph500_scale10_vector_end_to_end(kron10, tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["run", str(kron10), "--algorithm", "seq-csr", "--save-parents", "2",
                 "--out", str(run)]) == 0
    rows = pq.read_table(run / "searches.parquet").to_pylist()
    # the reference's facts: 64 roots, each reaches 897 vertices with nedge 16239
    assert len(rows) == 64 and rows[0]["root"] == 458
    assert {r["reached"] for r in rows} == {897} and {r["nedge"] for r in rows} == {16239}
    info = json.loads((run / "run.json").read_text())
    assert info["valid"] and info["graph500"]["nedge"]["mean"] == 16239
    assert info["parameters"]["roots"][:3] == [458, 214, 220]
    assert info["environment"]["cpu_cores"] >= 1 and info["construction_time"] > 0
    block = (run / "graph500.txt").read_text()
    assert block in capsys.readouterr().out
    assert "SCALE:                          10" in block and "NBFS:                           64" in block
    assert sorted(p.name for p in (run / "parents").iterdir()) == ["root-214.parquet",
                                                                   "root-458.parquet"]
    assert main(["validate", str(run), "--report", str(tmp_path / "v.json")]) == 0
    assert json.loads((tmp_path / "v.json").read_text())["valid"]


def test_invalid_search_fails_the_run(kron10, tmp_path, monkeypatch):
    monkeypatch.setitem(ALGORITHMS, "broken", AlgorithmSpec("broken", {"cpu": "helpers"}, "test only"))
    run = tmp_path / "run"
    assert main(["run", str(kron10), "--algorithm", "broken", "--roots", "3",
                 "--save-parents", "1", "--out", str(run)]) == 1
    info = json.loads((run / "run.json").read_text())
    assert info["valid"] is False and info["graph500"] is None
    assert not any(r["valid"] for r in pq.read_table(run / "searches.parquet").to_pylist())
    assert main(["validate", str(run)]) == 1


def test_tampered_parents_fail_revalidation(kron10, tmp_path):
    run = tmp_path / "run"
    assert main(["run", str(kron10), "--algorithm", "seq-list", "--root", "458",
                 "--save-parents", "1", "--out", str(run)]) == 0
    path = run / "parents" / "root-458.parquet"
    table = pq.read_table(path).to_pandas()
    child = int(np.flatnonzero(table["level"].to_numpy() == 2)[0])
    table.loc[child, "parent"] = 458  # the root is two levels up: rule 2
    table.to_parquet(path)
    assert main(["validate", str(run)]) == 1


@pytest.mark.parametrize("args,message", [
    (["run", "{tmp}/nothing", "--algorithm", "seq-csr", "--out", "{tmp}/r"],
     "not a graph directory"),
    (["run", "{g}", "--algorithm", "bogus", "--out", "{tmp}/r"], "unknown algorithm 'bogus'"),
    (["run", "{g}", "--algorithm", "seq-csr", "--root", "5000", "--out", "{tmp}/r"],
     "5000"),
    # a graph directory placed on more ranks than there are (it is placed on the ranks'
    # grid, each reading its share: test_mpi's test_run_places_a_graph_directory_on_the_ranks)
    (["run", "{g}", "--algorithm", "2d", "--grid", "1x2", "--out", "{tmp}/r"],
     "a 1x2 grid needs 2 MPI ranks but this process is alone"),
    (["run", "{g}", "--algorithm", "semiring", "--grid", "2x2", "--out", "{tmp}/r"],
     "a 2x2 grid needs 4 MPI ranks"),
    (["run", "{g}", "--algorithm", "gpu-quadratic", "--backend", "cpu", "--out", "{tmp}/r"],
     "has no cpu backend"),
])
def test_bad_input_names_the_problem(kron10, tmp_path, capsys, args, message):
    args = [a.format(tmp=tmp_path, g=kron10) for a in args]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "bfs: error:" in err and message in err
    assert not (tmp_path / "r").exists()


def test_malformed_snap_names_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_text("# header\n1 2\n3 x\n")
    assert main(["generate", "snap", str(bad), "--out", str(tmp_path / "g")]) == 1
    assert "bad.txt:3:" in capsys.readouterr().err
    assert not (tmp_path / "g").exists()


def test_snap_graph_runs_and_validates(tmp_path):
    g = tmp_path / "g"
    assert main(["generate", "snap", str(SNAP_DIR / "p2p-Gnutella09.txt"), "--out", str(g)]) == 0
    assert main(["run", str(g), "--algorithm", "seq-csr", "--roots", "4", "--save-parents", "4",
                 "--out", str(tmp_path / "r")]) == 0
    assert main(["validate", str(tmp_path / "r")]) == 0


def test_comm_choice_is_checked(tmp_path, capsys):
    """--comm: nccl needs the GPU backend; single-process algorithms take no --comm; run.json
    records the exchange a distributed run used."""
    graph, part = tmp_path / "g", tmp_path / "p"
    assert main(["generate", "kronecker", "--scale", "6", "--out", str(graph)]) == 0
    assert main(["partition", str(graph), "--grid", "1x1", "--out", str(part)]) == 0
    capsys.readouterr()
    assert main(["run", str(part), "--algorithm", "2d", "--backend", "cpu", "--comm", "nccl",
                 "--roots", "1", "--out", str(tmp_path / "r1")]) == 1
    assert "--comm nccl moves device buffers: it needs --backend gpu" in capsys.readouterr().err
    assert main(["run", str(graph), "--algorithm", "seq-csr", "--comm", "mpi", "--roots", "1",
                 "--out", str(tmp_path / "r2")]) == 1
    assert "--comm is not an option of seq-csr (it takes no options)" in capsys.readouterr().err
    assert not (tmp_path / "r1").exists() and not (tmp_path / "r2").exists()
    assert main(["run", str(part), "--algorithm", "2d", "--backend", "cpu", "--roots", "1",
                 "--out", str(tmp_path / "r3")]) == 0
    assert json.loads((tmp_path / "r3" / "run.json").read_text())["parameters"]["comm"] == "mpi"


def test_algorithms_lists_the_registry(capsys):
    assert main(["algorithms"]) == 0
    rows = {line.split()[0]: line.split()[1:] for line in capsys.readouterr().out.splitlines()}
    assert set(rows) == set(ALGORITHMS)
    assert rows["semiring"][:2] == ["cpu/gpu", "mpi"]      # distributed, both backends
    assert rows["seq-list"][0] == "cpu" and rows["seq-list"][1] != "mpi"   # serial, CPU only
    assert rows["gpu-quadratic"][0] == "gpu" and rows["gpu-quadratic"][1] != "mpi"


def test_gpu_only_algorithm_without_a_gpu_is_named(kron10, tmp_path, capsys, monkeypatch):
    from bfs.harness import request
    monkeypatch.setattr(request, "gpu_available", lambda: False)
    assert main(["run", str(kron10), "--algorithm", "gpu-quadratic", "--out",
                 str(tmp_path / "r")]) == 1
    assert "'gpu-quadratic' runs only on the GPU" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_bench_algorithm_variants_keep_their_options_together():
    from bfs.algorithms.options import parse_algorithm, split_algorithms
    variants = split_algorithms(["merrill,merrill-do@rows=graph,writes=reset", "2d",
                                 "merrill-do@bu=2x8"])
    assert variants == ["merrill", "merrill-do@rows=graph,writes=reset", "2d", "merrill-do@bu=2x8"]
    assert parse_algorithm(variants[1]) == ("merrill-do", {"rows": "graph", "writes": "reset"})
    with pytest.raises(BfsError, match="'bu=2x8' follows no ALGORITHM@KEY=VALUE"):
        split_algorithms(["merrill,bu=2x8"])


def test_bench_refuses_a_graph_or_variant_named_twice(kron10, tmp_path, capsys):
    """A bench run's directory is OUT/GRAPH/VARIANT: a graph or a variant given twice is
    refused by name before anything runs (a repeat would overwrite the first run)."""
    out = tmp_path / "b"
    assert main(["bench", "--graphs", str(kron10), str(kron10), "--algorithms", "seq-csr",
                 "--roots", "1", "--out", str(out)]) == 1
    assert "two graphs are named 'kron-s10-e16'" in capsys.readouterr().err
    assert main(["bench", "--scales", "6", "6", "--algorithms", "seq-csr", "--roots", "1",
                 "--out", str(out)]) == 1
    assert "two graphs are named 'kron-s6-e16'" in capsys.readouterr().err
    assert main(["bench", "--scales", "6", "--algorithms", "seq-csr", "seq-csr", "--roots", "1",
                 "--out", str(out)]) == 1
    assert "'seq-csr' is among the algorithms twice" in capsys.readouterr().err
    assert not out.exists()


def parsers(parser, prog="bfs"):
    """(prog, parser) for bfs and every subcommand under it."""
    import argparse
    yield prog, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from parsers(sub, f"{prog} {name}")


def test_every_option_has_help_stating_its_default():
    """`--help` of every subcommand: each option explained, each default written out."""
    import argparse
    from bfs.cli import build_parser, shown
    checked = set()
    for prog, parser in parsers(build_parser()):
        for action in parser._actions:
            if action.help == argparse.SUPPRESS or isinstance(action, argparse._SubParsersAction):
                continue
            assert action.help, f"{prog} {action.option_strings or action.dest}: no help"
            default = action.default
            if (action.option_strings and default is not None and default is not False
                    and default != argparse.SUPPRESS):
                # the option's own paragraph, as `--help` prints it
                paragraph = " ".join(parser._get_formatter()._format_action(action).split())
                assert "default" in paragraph and shown(default) in paragraph, (prog, paragraph)
                checked.add(f"{prog} {action.option_strings[-1]}")
    assert {"bfs run --save-parents", "bfs run --backend", "bfs run --roots",
            "bfs generate kronecker --seeds", "bfs generate lattice --diagonal-prob",
            "bfs bench --graph500-version"} <= checked


def test_validate_after_a_default_run_works_and_without_parents_says_how(kron10, tmp_path,
                                                                          capsys):
    """`bfs run` with no --save-parents keeps the first search's tree, so `bfs validate` has
    something to check; a run that saved none says how to get some."""
    assert main(["run", str(kron10), "--algorithm", "seq-csr", "--roots", "2",
                 "--out", str(tmp_path / "r")]) == 0
    assert [p.name for p in (tmp_path / "r" / "parents").iterdir()] == ["root-458.parquet"]
    assert main(["validate", str(tmp_path / "r")]) == 0
    assert main(["run", str(kron10), "--algorithm", "seq-csr", "--roots", "2",
                 "--save-parents", "0", "--out", str(tmp_path / "none")]) == 0
    capsys.readouterr()
    assert main(["validate", str(tmp_path / "none")]) == 1
    err = capsys.readouterr().err
    assert "no saved parents to validate: the run had --save-parents 0" in err
    assert "run it again with --save-parents K" in err
