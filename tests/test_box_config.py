"""bench/box_config.py, the GPU-box workflow's config rewrite (bench/device.sh box): the
box configs rewritten at chosen scales pass the workflow's own checks (a Snakemake dry run:
the schema, then common.smk's checks), every experiment's graphs defined."""
import importlib.util
import os
import shutil
import subprocess
import sys
import tarfile

import pytest
import yaml

from helpers import ROOT

spec = importlib.util.spec_from_file_location("box_config", ROOT / "bench" / "box_config.py")
box_config = importlib.util.module_from_spec(spec)
spec.loader.exec_module(box_config)

CONFIGS = ["gpu_box.yaml", "gpu_box_small.yaml"]
SCALES = [(26, 27), (19, 20), (12, 13)]


def defined(config) -> set:
    return {g for graphs in config["graphs"].values() if isinstance(graphs, dict) for g in graphs}


@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.parametrize("s1,s2", SCALES, ids=lambda s: str(s))
def test_every_experiment_uses_defined_graphs(name, s1, s2):
    original = yaml.safe_load((ROOT / "config" / name).read_text())
    c = box_config.box_config(original, s1, s2, 8, log=lambda text: None)
    assert c["roots"] == 8 and c["results"] == "results"
    assert set(c["graphs"]["kronecker"]) == {f"kron-s{s1}", f"kron-s{s2}"}
    assert [c["graphs"]["kronecker"][f"kron-s{s}"]["scale"] for s in (s1, s2)] == [s1, s2]
    for exp in c["experiments"].values():
        assert set(box_config.graph_refs(exp)) <= defined(c), exp
    exps = c["experiments"]
    assert exps["strong_scaling"]["graphs"] == [f"kron-s{s1}", f"kron-s{s2}"]
    # the road-like strong scaling keeps its lattice: no Kronecker graph takes its role
    road = box_config.graph_refs(exps["road_strong_scaling"])
    assert road == box_config.graph_refs(original["experiments"]["road_strong_scaling"])
    assert road and all(g.startswith("lattice-") for g in road)
    assert exps["weak_scaling"]["points"] == [{"ranks": 1, "graph": f"kron-s{s1}"},
                                              {"ranks": 2, "graph": f"kron-s{s2}"}]
    # hybrid's task count sweep and Racherla's sweep follow their graph's role: the task count
    # sweep stays where its graph has one (a scaling graph's) and goes with its graph where it
    # has none (gpu_box.yaml's kron-s21-e32, the paper's Fig. 9 graph), as the lambda sweep's
    # graphs go and it with them; the lattice stays
    renamed = box_config.roles(original["experiments"], f"kron-s{s1}", f"kron-s{s2}",
                               original["graphs"]["kronecker"])
    tasks_graphs = box_config.graph_refs(original["experiments"]["task_count_sweep"])
    assert "lambda_sweep" not in exps
    assert ("task_count_sweep" in exps) == any(g in renamed for g in tasks_graphs)
    assert ("task_count_sweep" in exps) == (name != "gpu_box.yaml")
    assert any(g.startswith("lattice-") for g in exps["small_frontier_sweep"]["graphs"])
    # in-place generation kept for the graphs of the role it had
    in_place = {g for g, p in original["graphs"]["kronecker"].items() if p.get("in_place")}
    assert bool(in_place) == all(p.get("in_place") for p in c["graphs"]["kronecker"].values())
    # the original is left as it was
    assert original == yaml.safe_load((ROOT / "config" / name).read_text())


def test_experiment_left_without_graphs_is_dropped_and_single_graph_kept():
    config = {"results": "r", "roots": 4, "graphs": {
        "kronecker": {"a": {"scale": 10, "edgefactor": 8}, "b": {"scale": 11}, "c": {"scale": 5}},
        "lattice": {"l": {"rows": 3, "cols": 3}}},
        "experiments": {
            "weak_scaling": {"points": [{"ranks": 2, "graph": "b"}, {"ranks": 1, "graph": "a"}]},
            "real_graphs": {"graphs": ["c"], "algorithms": ["seq-csr"]},
            "sf": {"kind": "small_frontier_sweep", "graph": "b"},
            "implementations": {"graphs": ["a", "c", "l"], "algorithms": ["seq-csr"]}}}
    said = []
    c = box_config.box_config(config, 14, 15, 2, log=said.append)
    assert c["graphs"]["kronecker"] == {"kron-s14": {"scale": 14, "edgefactor": 8},
                                        "kron-s15": {"scale": 15, "edgefactor": 16}}
    assert "real_graphs" not in c["experiments"]
    assert c["experiments"]["sf"] == {"kind": "small_frontier_sweep", "graph": "kron-s15"}
    assert c["experiments"]["implementations"]["graphs"] == ["kron-s14", "l"]
    assert any("real_graphs dropped" in s for s in said)
    with pytest.raises(ValueError, match="differ"):
        box_config.box_config(config, 14, 14, 2)


@pytest.mark.parametrize("name", CONFIGS)
def test_weak_scaling_at_chosen_scales_on_the_box_grids(name):
    """--weak: weak scaling's points on 1, 2, 4 ranks (the 1xP grids) at the given scales,
    every graph defined with the settings of S2's role; bad lists refused."""
    original = yaml.safe_load((ROOT / "config" / name).read_text())
    c = box_config.box_config(original, 20, 21, 4, log=lambda text: None, weak=[20, 21, 22])
    points = [{"ranks": 1, "graph": "kron-s20"}, {"ranks": 2, "graph": "kron-s21", "grid": "1x2"},
              {"ranks": 4, "graph": "kron-s22", "grid": "1x4"}]
    weak = [e for n, e in c["experiments"].items() if e.get("kind", n) == "weak_scaling"]
    assert weak and all(e["points"] == points for e in weak)
    kron = c["graphs"]["kronecker"]
    assert kron["kron-s22"] == {**kron["kron-s21"], "scale": 22}
    for exp in c["experiments"].values():
        assert set(box_config.graph_refs(exp)) <= defined(c), exp
    for bad in ([20], [20, 20]):
        with pytest.raises(ValueError, match="two or more different scales"):
            box_config.box_config(original, 20, 21, 4, weak=bad)


@pytest.mark.skipif(shutil.which("snakemake") is None, reason="needs snakemake")
@pytest.mark.parametrize("name", CONFIGS)
def test_rewritten_config_passes_the_workflow_checks(name, tmp_path):
    """What gpu_box_workflow.sh does, up to a dry run of the workflow (schema and checks)."""
    (tmp_path / "data").symlink_to(ROOT / "data")
    out = tmp_path / "config.yaml"
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "box_config.py"),
                           str(ROOT / "config" / name), str(out), "12", "13", "4",
                           "--weak", "12", "13", "14"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "lambda_sweep dropped" in proc.stderr
    dry = subprocess.run(["snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(tmp_path),
                          "--configfile", str(out), "-n"], capture_output=True, text=True,
                         cwd=tmp_path, timeout=600)
    assert dry.returncode == 0, dry.stdout[-3000:] + dry.stderr[-3000:]
    assert "kron-s12" in dry.stdout and "kron-s13" in dry.stdout and "kron-s14" in dry.stdout
    assert "experiments use graphs not defined" not in dry.stderr


@pytest.mark.skipif(shutil.which("snakemake") is None, reason="needs snakemake")
def test_box_workflow_resumes_from_the_runs_an_earlier_call_packed(tmp_path):
    """bench/device.sh box across calls on machines not kept: each packs its validated runs
    (less the saved parents) into results.tar.gz; a call given it as RESUME makes only what is
    missing (here the table: the same table), and a call stopped by LIMIT packs no run it cut
    short. CPU runs of an in-place graph stand for the GPU box's (nvidia-smi faked: no GPU)."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "nvidia-smi").write_text("#!/bin/sh\nexit 0\n")
    (fake / "nvidia-smi").chmod(0o755)
    config = tmp_path / "box.yaml"
    config.write_text(yaml.safe_dump({
        "results": "results/box", "roots": 4, "save_parents": 1,
        "graphs": {"kronecker": {"kron-s9": {"scale": 9, "edgefactor": 8, "in_place": True}}},
        "experiments": {"real_graphs": {"graphs": ["kron-s9"],
                                        "algorithms": ["seq-csr", "seq-list"]}}}))

    def call(out, **env):
        env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}",
               "CONFIG": str(config), "AS_IS": "1", "ROOTS": "4", "OUT": str(out),
               "WORK": str(tmp_path / "work"), "TARGETS": "results/tables/real_graphs.md", **env}
        return subprocess.run(["bash", str(ROOT / "bench" / "device.sh"), "box"], env=env,
                              capture_output=True, text=True, cwd=ROOT, timeout=600)

    first = call(tmp_path / "first")
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    packed = tmp_path / "first" / "results.tar.gz"
    with tarfile.open(packed) as tar:
        names = tar.getnames()
    runs = {"kron-s9/seq-csr/cpu-serial-default", "kron-s9/seq-list/cpu-serial-default"}
    assert {n.removeprefix("results/validation/").removesuffix(".json")
            for n in names if n.startswith("results/validation/")} == runs
    assert all(f"results/runs/{r}/run.json" in names for r in runs)
    assert not [n for n in names if "/parents" in n]
    shutil.rmtree(tmp_path / "work")          # another machine
    second = call(tmp_path / "second", RESUME=str(packed))
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    assert "resumed: 2 validated runs" in second.stdout
    log = (tmp_path / "second" / "workflow.log").read_text()
    assert "rule bfs_" not in log and "rule validate" not in log and "rule table" in log
    assert (tmp_path / "second" / "real_graphs.md").read_text() == \
        (tmp_path / "first" / "real_graphs.md").read_text()
    shutil.rmtree(tmp_path / "work")
    cut = call(tmp_path / "cut", LIMIT="1")
    assert cut.returncode == 124
    with tarfile.open(tmp_path / "cut" / "results.tar.gz") as tar:
        assert [n for n in tar.getnames() if n.startswith("results/validation/")] == []
