"""workflow/experiment_plan.py without Snakemake: the runs a config plans, the checks that refuse
a config (their messages, which the workflow prints), the tables and figures, job sizes. The
Snakemake runs of tests/test_workflow.py check the same plan through the rules."""
import tempfile
from pathlib import Path

import pytest
import yaml

from helpers import ROOT, load_experiment_plan

experiment_plan = load_experiment_plan()
Plan = experiment_plan.Plan


def config(gpus=None, **experiments) -> dict:
    return {"results": "res", "roots": 4, **({"gpus": gpus} if gpus else {}),
            "graphs": {"kronecker": {"kron-s8": {"scale": 8}, "kron-s9": {"scale": 9,
                                                                          "in_place": True}},
                       "lattice": {"lat": {"rows": 10, "cols": 20}},
                       "snap": {"email": {"path": "data/snap/email-Eu-core.txt"}}},
            "experiments": experiments}


def test_strong_scaling_runs_grids_then_counts_with_the_one_rank_point_once():
    plan = Plan(config(strong_scaling={
        "graph": "kron-s8", "algorithms": ["2d", "1d"], "grids": ["2x1"], "ranks": [1, 2],
        "reference": "seq-csr", "exchange": ["scan", "wave"], "repeats": 2}))
    plan.check()
    runs = [r for _, r in plan.experiment_runs("strong_scaling")]
    # explicit grid first, then the squarest grid of each count; 1d names no exchange
    assert runs[:4] == ["2d/cpu-2x1-scan", "2d/cpu-2x1-scan-r2", "2d/cpu-2x1-wave",
                        "2d/cpu-2x1-wave-r2"]
    # a one-rank 2d run is planned once, under the first exchange listed (2d names its
    # exchange always)
    assert [r for r in runs if "1x1" in r] == ["2d/cpu-1x1-scan", "2d/cpu-1x1-scan-r2"]
    assert "1d/cpu-p2-default" in runs and "seq-csr/cpu-serial-default" in runs
    assert len(runs) == len(set(runs))
    assert plan.experiment_run_dirs("strong_scaling")[0] == "res/runs/kron-s8/2d/cpu-2x1-scan"
    assert plan.all_validations()[0] == "res/validation/kron-s8/2d/cpu-2x1-scan.json"


def test_weak_scaling_and_sweeps_plan_their_points():
    plan = Plan(config(
        weak_scaling={"algorithm": "2d", "points": [{"graph": "kron-s8", "ranks": 1},
                                                    {"graph": "kron-s9", "ranks": 2}]},
        sf={"kind": "small_frontier_sweep", "graphs": ["lat"], "ranks": 2,
            "small_frontier": [0, 100]}))
    plan.check()
    assert plan.experiment_runs("weak_scaling") == [("kron-s8", "2d/cpu-1x1-scan"),
                                                    ("kron-s9", "2d/cpu-1x2-scan")]
    assert plan.experiment_runs("sf") == [("lat", "1d/cpu-p2-sf0"), ("lat", "1d/cpu-p2-sf100"),
                                          ("lat", "seq-csr/cpu-serial-default")]
    assert plan.run_backend("sf", "seq-csr") == "cpu"


def test_tables_and_figures_are_named_by_kind_or_experiment():
    plan = Plan(config(strong_scaling={"graph": "kron-s8", "algorithm": "2d", "ranks": [1]},
                       gpu_strong={"kind": "strong_scaling", "graph": "kron-s8",
                                   "algorithm": "2d", "ranks": [2]}))
    assert plan.tables["strong_scaling"] == ("strong_scaling", ["strong_scaling"],
                                             "strong_scaling")
    assert plan.tables["gpu_strong-strong_scaling"][1] == ["gpu_strong"]
    assert plan.tables["kernel1"][1] == ["strong_scaling", "gpu_strong"]   # pooled
    assert plan.figures["frontier"][1] == ["strong_scaling", "gpu_strong"]
    assert plan.headline_figure() == "strong_scaling"
    assert plan.experiment_title("gpu_strong") == "Strong scaling (gpu_strong)"
    assert "res/figures/gteps_vs_watts.svg" in plan.all_figures()
    assert "res/tables/kernel1.md" in plan.all_tables()
    assert "res/figures/weak_scaling.png" not in plan.all_figures()


def test_experiment_titles_are_distinct_link_targets_in_the_report():
    """snakemake's report makes a reStructuredText link target of every category (``.. _TITLE:
    javascript:...``); each experiment's title must stay one target of its own there (a colon
    in it ends the name: "Strong scaling: a" and "Strong scaling: b" were one target twice)."""
    from docutils import nodes
    from docutils.core import publish_doctree
    plan = Plan(config(strong_scaling={"graph": "kron-s8", "algorithm": "2d", "ranks": [1]},
                       gpu_strong={"kind": "strong_scaling", "graph": "kron-s8",
                                   "algorithm": "2d", "ranks": [2]},
                       road_strong={"kind": "strong_scaling", "graph": "kron-s8",
                                    "algorithm": "2d", "ranks": [2]}))
    titles = [plan.experiment_title(name) for name in plan.experiments]
    rst = "\n".join(f".. _{title}: javascript:app.showCategory('x')" for title in titles)
    doctree = publish_doctree(rst, settings_overrides={"report_level": 5})
    names = [name for target in doctree.findall(nodes.target) for name in target["names"]]
    assert sorted(names) == sorted(" ".join(title.lower().split()) for title in titles)
    assert len(set(names)) == 3, names


BAD = {
    "kind": ({"strong_scaling": {"kind": "weak_scaling", "points": [{"graph": "kron-s8",
                                                                      "ranks": 1}],
                                 "algorithm": "2d"}},
             "experiments.strong_scaling is of kind strong_scaling"),
    "graph": ({"real_graphs": {"graphs": ["nope"], "algorithms": ["seq-csr"]}},
              "experiments use graphs not defined under graphs: ['nope']"),
    "comm": ({"real_graphs": {"graphs": ["kron-s8"], "algorithms": ["2d"], "comm": ["nccl"]}},
             "experiments.real_graphs: comm nccl exchanges device buffers"),
    "backend": ({"real_graphs": {"graphs": ["kron-s8"], "algorithms": ["merrill"]}},
                "experiments.real_graphs has backend cpu but lists merrill, which has no cpu "
                "backend"),
    "sweep": ({"real_graphs": {"graphs": ["kron-s8"], "algorithms": ["seq-csr"],
                               "sweep": {"exchange": ["scan"]}}},
              "experiments.real_graphs sweeps exchange, which none of its algorithms "
              "(seq-csr) takes"),
    "reference": ({"strong_scaling": {"graph": "kron-s8", "algorithm": "2d", "ranks": [1],
                                      "reference": "1d"}},
                  "experiments.strong_scaling: reference names the single-process search"),
    "exclusive": ({"strong_scaling": {"graph": "kron-s8", "algorithm": "2d", "ranks": [4],
                                      "backend": "gpu"}},
                  "runs 2d on kron-s8 with 4 ranks (2x2, a GPU each) but exclusive_gpus is 2"),
}


@pytest.mark.parametrize("case", BAD)
def test_each_check_names_what_is_wrong(case):
    experiments, says = BAD[case]
    c = config(**experiments)
    if case == "exclusive":
        c["exclusive_gpus"] = 2
    with pytest.raises(ValueError, match="^config: .*" if case != "graph" else None) as err:
        Plan(c).check()
    assert says in str(err.value)


def test_comparisons_and_cluster_are_checked():
    c = config(real_graphs={"graphs": ["kron-s8"], "algorithms": ["seq-csr", "seq-list"]})
    c["comparisons"] = {"x": {"a": "kron-s8/seq-csr/cpu-serial-default",
                              "b": "kron-s8/seq-list/cpu-serial-default"}}
    plan = Plan(c)
    plan.check()
    assert plan.all_comparisons()[0] == "res/comparisons/x/summary.csv"
    c["comparisons"]["x"]["b"] = "kron-s8/seq-list/cpu-serial-nope"
    with pytest.raises(ValueError, match="comparisons.x.b: kron-s8/seq-list/cpu-serial-nope is "
                                         "not a run of the experiments.*runs of that graph"):
        Plan(c).check()
    c["comparisons"]["x"]["b"] = c["comparisons"]["x"]["a"]
    with pytest.raises(ValueError, match="a and b are the same run"):
        Plan(c).check()
    c = config()
    c["exclusive_gpus"], c["cluster"] = 2, {"gpus_per_node": 4}
    with pytest.raises(ValueError, match=r"exclusive_gpus \(2\) is for one box.*"
                                         r"gpus_per_node \(4\)"):
        Plan(c).check()


def test_job_sizes_follow_the_graphs():
    plan = Plan(config())
    assert plan.graph_size("kron-s8") == (256, 256 * 16)
    assert plan.graph_size("lat") == (200, 600)
    assert plan.graph_depth("lat") == 30 and plan.graph_depth("kron-s8") == 30
    assert plan.graph_depth("email") == 2000
    assert plan.kronecker_spec("kron-s9") == (9, 16, [2, 3], "3.0")
    assert plan.in_place == {"kron-s9"}
    assert plan.mem_mb_for("kron-s8", 2) >= 2 * 1500      # two ranks on one node, each a base
    assert plan.runtime_for("kron-s8", attempt=2) >= plan.runtime_for("kron-s8")
    assert plan.bfs_runtime("kron-s8", 1, "cpu") >= 1
    assert (plan.job_gpus("gpu", 2), plan.job_gpus("cpu", 2)) == (2, 0)
    assert (plan.validation_gpus("kron-s9", "gpu"), plan.validation_gpus("kron-s8", "gpu")) == (1, 0)
    c = config()
    c["exclusive_gpus"], c["cluster"] = 4, {"cpu_ranks_per_node": 16}
    box = Plan(c)
    assert (box.job_gpus("gpu", 2), box.validation_gpus("kron-s9", "auto")) == (4, 4)
    assert (box.ranks_per_node(4), box.ranks_per_node(0)) == (None, 16)


def test_layouts_and_run_names():
    assert experiment_plan.layout_for("seq-csr", 4) == "serial"
    assert experiment_plan.layout_for("2d", 4) == "2x2"
    assert experiment_plan.layout_for("2d", grid="1x4") == "1x4"
    assert experiment_plan.layout_for("1d", grid="2x2") == "p4"
    assert [experiment_plan.layout_ranks(x) for x in ("serial", "p3", "2x4")] == [1, 3, 8]
    assert experiment_plan.run_name("2d", "gpu", "1x2", "scan") == "2d/gpu-1x2-scan"


# --- the box's GPU count (`gpus`, else the GPUs visible) -------------------------------------

def shipped(name: str, **keys) -> dict:
    """A shipped config with these keys set, checked against the schema, which fills in its
    defaults as the workflow's load does (common.smk)."""
    from snakemake.utils import validate
    c = {**yaml.safe_load((ROOT / "config" / name).read_text()), **keys}
    schema = experiment_plan.config_schema(ROOT / "workflow/schemas/config.schema.yaml")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "config.schema.yaml"
        path.write_text(yaml.safe_dump(schema))
        validate(c, schema=str(path))
    return c


def box_config(name: str, gpus: int | None = None) -> dict:
    """A GPU-box config (config/gpu_box.yaml or its small twin), with `gpus: N` where given."""
    return shipped(name, **({"gpus": gpus} if gpus else {}))


def layouts(plan: Plan, name: str, algorithm: str) -> list:
    """The layouts an experiment runs an algorithm on, in plan order, each once."""
    return list(dict.fromkeys(layout for _, (a, _, layout, _) in plan.experiment_layouts(name)
                              if a == algorithm))


# the grids of each box size: 1xP first, then the squarer shape; Px1 only at 2 (2x1)
GRIDS = {1: ["1x1"], 2: ["1x1", "1x2", "2x1"], 4: ["1x1", "1x2", "2x1", "1x4", "2x2"],
         8: ["1x1", "1x2", "2x1", "1x4", "2x2", "1x8", "2x4"]}
WEAK = {1: (26, 28), 2: (27, 29), 4: (28, 30), 8: (29, 31)}   # weak scaling, memory limit


@pytest.mark.parametrize("gpus", [1, 2, 4, 8])
def test_gpus_sets_the_grids_weak_points_and_exclusive_gpus_of_the_gpu_box(gpus):
    plan = Plan(box_config("gpu_box.yaml", gpus))
    plan.check()
    counts = [c for c in (1, 2, 4, 8) if c <= gpus]
    # scan and wave on the grids of several rows, NCCL and MPI on the 1xP ones, as the
    # small twin's (a 1xP wave run is its scan run again)
    for name, grids in (("strong_scaling", GRIDS[gpus]),
                        ("exchange_ablation", [g for g in GRIDS[gpus]
                                               if g == "1x1" or g[0] != "1"]),
                        ("comm_ablation", [g for g in GRIDS[gpus] if g[0] == "1"])):
        for algorithm in ("2d", "2d-do"):
            assert layouts(plan, name, algorithm) == grids, (name, algorithm)
        assert layouts(plan, name, "merrill-do") == ["serial"]     # the COST reference
    assert layouts(plan, "strong_scaling", "1d") == [f"p{c}" for c in counts]
    # the road-like scaling: 2d-do on the grids of one row (its level loop across GPUs) on
    # the lattice, merrill-do on one GPU beside it
    road = plan.experiment_layouts("road_strong_scaling")
    assert {g for g, _ in road} == {"lattice-2000x2000", "lattice-2000x2000-rows"}
    assert layouts(plan, "road_strong_scaling", "2d-do") == [f"1x{c}" for c in counts]
    assert layouts(plan, "road_strong_scaling", "merrill-do") == ["serial"]
    # weak scaling: one scale more each time the GPUs double, on the 1xP grids
    weak = [(g, layout) for g, (a, _, layout, _) in plan.experiment_layouts("weak_scaling")
            if a == "2d"]
    assert weak == [(f"kron-s{26 + i}", f"1x{c}") for i, c in enumerate(counts)]
    assert weak[-1][0] == f"kron-s{WEAK[gpus][0]}"
    limit = plan.experiment_layouts("weak_scaling_at_the_memory_limit")
    assert [(g, layout) for g, (_, _, layout, _) in limit] == \
        [(f"kron-s{28 + i}", f"1x{c}") for i, c in enumerate(counts)]
    assert limit[-1][0] == f"kron-s{WEAK[gpus][1]}"
    # Racherla's sweep runs on 1 and 2 GPUs where the box has them
    assert layouts(plan, "small_frontier_sweep", "1d") == [f"p{c}" for c in counts if c <= 2]
    # every GPU job takes the box where it runs several ranks; one GPU: one each
    assert plan.exclusive_gpus == (gpus if gpus > 1 else 0)
    assert plan.job_gpus("gpu", 1) == gpus and plan.job_gpus("cpu", 1) == 0
    assert max(experiment_plan.layout_ranks(layout) for name in plan.experiments
               for _, (_, _, layout, _) in plan.experiment_layouts(name)) == gpus


@pytest.mark.parametrize("gpus", [1, 2, 4, 8])
def test_gpus_scales_the_small_twin_alike(gpus):
    plan = Plan(box_config("gpu_box_small.yaml", gpus))
    plan.check()
    counts = [c for c in (1, 2, 4, 8) if c <= gpus]
    assert layouts(plan, "strong_scaling", "2d-do") == GRIDS[gpus]
    # scan and wave on the grids of several rows, NCCL and MPI on the 1xP ones (below)
    assert layouts(plan, "exchange_ablation", "2d-do") == [g for g in GRIDS[gpus]
                                                           if g == "1x1" or g[0] != "1"]
    assert layouts(plan, "comm_ablation", "2d-do") == [g for g in GRIDS[gpus] if g[0] == "1"]
    assert layouts(plan, "strong_scaling", "1d") == [f"p{c}" for c in counts]
    assert [g for g, (a, *_) in plan.experiment_layouts("weak_scaling") if a == "1d"] == \
        [f"kron-s{19 + i}" for i in range(len(counts))]
    assert [g for g, _ in plan.experiment_layouts("weak_scaling_at_the_memory_limit")] == \
        [f"kron-s{20 + i}" for i in range(len(counts))]


def planned(plan: Plan) -> set:
    return {f"{g}/{r}" for name in plan.experiments for g, r in plan.experiment_runs(name)}


@pytest.mark.parametrize("gpus", [1, 2, 4, 8])
def test_the_small_twin_leaves_out_only_wave_on_grids_of_one_row(gpus):
    """config/gpu_box_small.yaml's exchange_ablation and comm_ablation against one
    exchange_ablation over every grid (config/gpu_box.yaml's): the same runs but wave on the 1xP
    grids, where no scan or wave runs (fu_2d._scan returns at R = 1), so no path is lost."""
    small = box_config("gpu_box_small.yaml", gpus)
    whole = box_config("gpu_box_small.yaml", gpus)
    experiments = whole["experiments"]
    experiments["exchange_ablation"]["grids"] = experiments["strong_scaling"]["grids"]
    del experiments["comm_ablation"]
    left_out = planned(Plan(whole)) - planned(Plan(small))
    assert planned(Plan(small)) <= planned(Plan(whole))
    assert left_out == {f"kron-s20/{a}/gpu-1x{c}-wave{comm}" for a in ("2d", "2d-do")
                        for c in (2, 4, 8) if c <= gpus for comm in ("", "-mpi")}
    # what is still run of each (algorithm, exchange, comm) on grids of one row and of several
    kept = planned(Plan(small))
    for a in ("2d", "2d-do"):
        for comm in ("", "-mpi"):
            for c in (2, 4, 8):
                if c <= gpus:
                    assert f"kron-s20/{a}/gpu-1x{c}-scan{comm}" in kept
                    squarer = {2: "2x1", 4: "2x2", 8: "2x4"}[c]
                    assert f"kron-s20/{a}/gpu-{squarer}-wave{comm}" in kept
    assert gpus < 2 or {"kron-s20/1d/gpu-p2-mpi"} <= kept


def test_share_gpus_asks_for_the_gpus_a_job_uses_through_the_slot_launcher():
    shared = Plan(box_config("gpu_box_small.yaml", 4))
    shared.check()
    assert shared.share_gpus and shared.exclusive_gpus == 0
    assert [shared.job_gpus("gpu", r) for r in (1, 2, 4)] == [1, 2, 4]
    assert shared.job_gpus("cpu", 1) == 0
    assert shared.slot_launcher(2) == ("python3 -m workflow.gpu_slots --dir "
                                       "results/gpu_box_small/.gpu-slots --slots 4 --take 2 -- ")
    assert shared.slot_launcher(0) == ""          # CPU jobs start as they are
    # the same box not shared: every GPU job takes all four GPUs and no launcher
    whole = Plan({**box_config("gpu_box_small.yaml", 4), "share_gpus": False})
    whole.check()
    assert whole.exclusive_gpus == 4
    assert [whole.job_gpus("gpu", r) for r in (1, 2, 4)] == [4, 4, 4]
    assert whole.slot_launcher(4) == ""
    # the paper-grade config keeps one GPU job at a time
    paper = Plan(box_config("gpu_box.yaml", 4))
    assert not paper.share_gpus and paper.job_gpus("gpu", 1) == 4
    # a validation on the GPU (an in-place graph) takes one slot; others none
    c = config(strong_scaling={"graph": "kron-s9", "algorithm": "2d", "ranks": [1, 2],
                               "backend": "gpu"}, gpus=2)
    c["share_gpus"] = True
    plan = Plan(c)
    plan.check()
    assert (plan.validation_gpus("kron-s9", "gpu"), plan.validation_gpus("kron-s8", "gpu"),
            plan.validation_gpus("kron-s9", "cpu")) == (1, 0, 0)
    assert plan.slot_launcher(1).endswith("--slots 2 --take 1 -- ")
    assert Plan({**c, "share_gpus": False}).validation_gpus("kron-s9", "gpu") == 2
    # no box named and none visible: as many slots as the largest GPU job's ranks
    del c["gpus"]
    assert Plan(c).slot_count == 2


@pytest.mark.parametrize("keys,says", [
    ({"cluster": {"gpus_per_node": 4}}, "share_gpus is for one box run locally and cluster "
                                        "(gpus_per_node: 4) for a cluster's nodes"),
    ({"cluster": {"cpu_ranks_per_node": 16, "max_runtime": 60}},
     "cluster (cpu_ranks_per_node: 16, max_runtime: 60)"),
    ({"exclusive_gpus": 4}, "share_gpus runs GPU jobs side by side on the box and "
                            "exclusive_gpus (4) one at a time"),
])
def test_share_gpus_is_refused_with_cluster_keys_and_exclusive_gpus(keys, says):
    with pytest.raises(ValueError, match="^config: ") as err:
        Plan({**box_config("gpu_box_small.yaml", 4), **keys}).check()
    assert says in str(err.value)
    Plan({**box_config("gpu_box_small.yaml", 4), **keys, "share_gpus": False}).check()


@pytest.mark.parametrize("value", [True, False, "yes", 1, None])
def test_the_schema_takes_share_gpus_as_a_boolean_default_false(value):
    from snakemake.exceptions import WorkflowError
    if value is None:
        assert shipped("gpu_box.yaml")["share_gpus"] is False
    elif isinstance(value, bool):
        assert shipped("gpu_box.yaml", share_gpus=value)["share_gpus"] is value
    else:
        with pytest.raises(WorkflowError, match="share_gpus"):
            shipped("gpu_box.yaml", share_gpus=value)


def test_gpus_left_out_is_the_gpus_visible_else_every_point_listed():
    four = Plan(box_config("gpu_box.yaml"), visible_gpus=4)
    assert four.gpus == 4 and four.exclusive_gpus == 4
    assert layouts(four, "strong_scaling", "2d-do") == GRIDS[4]
    # the key wins over what the machine shows (a dry run of a bigger box)
    assert Plan(box_config("gpu_box.yaml", 8), visible_gpus=4).gpus == 8
    # no GPU visible: the config as written, today's plans (one GPU a rank)
    listed = Plan(box_config("gpu_box.yaml"))
    assert listed.gpus is None and listed.exclusive_gpus == 0
    assert layouts(listed, "strong_scaling", "2d-do") == GRIDS[8]
    assert listed.job_gpus("gpu", 4) == 4
    # a cluster's nodes: what the login node shows says nothing of them
    c = box_config("gpu_box.yaml")
    c["cluster"] = {"gpus_per_node": 4}
    cluster = Plan(c, visible_gpus=1)
    assert cluster.gpus is None and cluster.exclusive_gpus == 0
    assert layouts(cluster, "strong_scaling", "2d") == GRIDS[8]
    c["gpus"] = 4
    assert layouts(Plan(c), "strong_scaling", "2d") == GRIDS[4] and Plan(c).exclusive_gpus == 0
    # a config of one-GPU runs keeps one GPU a job on a box of four (--resources gpu=1)
    one_gpu = Plan(shipped("one_gpu.yaml"), visible_gpus=4)
    assert one_gpu.exclusive_gpus == 0 and one_gpu.job_gpus("gpu", 1) == 1
    # CPU runs are never left out for want of GPUs
    cpu = Plan(config(strong_scaling={"graph": "kron-s8", "algorithm": "2d", "ranks": [1, 4]},
                      gpus=1))
    assert layouts(cpu, "strong_scaling", "2d") == ["1x1", "2x2"]


def test_more_gpus_than_the_machine_shows_is_refused_naming_both():
    plan = Plan(box_config("gpu_box.yaml", 8), visible_gpus=4)
    plan.check()        # planning it is fine (a dry run); running it here is not
    with pytest.raises(ValueError, match=r"^config: gpus is 8 but this machine shows 4 GPUs .*"
                                         r"set gpus: 4 .*dry run \(snakemake -n\)"):
        plan.check_box_gpus(4)
    plan.check_box_gpus(8)
    plan.check_box_gpus(0)     # a machine that shows none (no nvidia-smi): not second-guessed
    Plan(box_config("gpu_box.yaml"), visible_gpus=4).check_box_gpus(4)


def test_gpus_and_a_point_grid_are_checked():
    c = box_config("gpu_box.yaml", 4)
    c["exclusive_gpus"] = 2
    with pytest.raises(ValueError, match=r"gpus \(4\) and exclusive_gpus \(2\) name two boxes"):
        Plan(c).check()
    c = box_config("gpu_box.yaml", 4)
    c["experiments"]["weak_scaling"]["points"][1]["grid"] = "2x2"
    with pytest.raises(ValueError, match="weak_scaling: the point of 2 ranks on kron-s27 names "
                                         "grid 2x2, of 4"):
        Plan(c).check()


def test_visible_gpus_reads_cuda_visible_devices_else_nvidia_smi(tmp_path):
    assert experiment_plan.visible_gpus({"CUDA_VISIBLE_DEVICES": "0,1,2,3"}) == 4
    assert experiment_plan.visible_gpus({"CUDA_VISIBLE_DEVICES": "GPU-a1,GPU-b2"}) == 2
    assert experiment_plan.visible_gpus({"CUDA_VISIBLE_DEVICES": ""}) == 0
    assert experiment_plan.visible_gpus({"CUDA_VISIBLE_DEVICES": "0,-1,2"}) == 1
    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\nfor i in 0 1 2 3 4 5 6 7; do echo \"GPU $i: NVIDIA H100 80GB HBM3 "
                   "(UUID: GPU-$i)\"; done\n")
    smi.chmod(0o755)
    assert experiment_plan.visible_gpus({}, smi=str(smi)) == 8
    assert experiment_plan.visible_gpus({}, smi=str(tmp_path / "none")) == 0


def test_planning_gpus_hands_the_main_process_count_to_its_jobs():
    """snakemake's main process reads the GPUs (here CUDA_VISIBLE_DEVICES) and hands the count
    on in the environment; a job's process (not main) plans with that count, 0 where none was
    handed on or it is not a count."""
    env = {"CUDA_VISIBLE_DEVICES": "0,1,2,3"}
    assert experiment_plan.planning_gpus(True, env) == 4
    assert env[experiment_plan.PLAN_GPUS_ENV] == "4"
    job_env = {experiment_plan.PLAN_GPUS_ENV: env[experiment_plan.PLAN_GPUS_ENV],
               "CUDA_VISIBLE_DEVICES": "2"}            # a job given one GPU of the four
    assert experiment_plan.planning_gpus(False, job_env) == 4
    assert experiment_plan.planning_gpus(False, {}) == 0
    assert experiment_plan.planning_gpus(False, {experiment_plan.PLAN_GPUS_ENV: "x"}) == 0


def test_omitted_runs_are_named_by_run_directory_or_verdict_and_handed_to_jobs():
    """--omit-from's paths (as snakemake's main process was given them) name planned runs by
    run directory or verdict, written either way (./, a trailing /); a job's process reads the
    main one's paths from the environment; a path of no planned run (a rule's name, another
    file) leaves none out."""
    plan = Plan(config(strong_scaling={"graph": "kron-s8", "algorithm": "2d", "ranks": [1, 2],
                                       "reference": "seq-csr"},
                       again={"kind": "strong_scaling", "graph": "kron-s8", "algorithm": "2d",
                              "ranks": [1, 2], "reference": "seq-csr"}))   # the same runs
    runs = plan.experiment_runs("strong_scaling")
    serial = next(run for run in runs if run[1].startswith("seq-csr/"))
    two = next(run for run in runs if "1x2" in run[1])
    env = {}
    named = experiment_plan.planning_omit_from(
        True, {f"./{plan.run_dir(*serial)}/", plan.validation_file(*two), "bfs_serial"}, env)
    assert sorted(plan.omitted_runs(named)) == sorted([serial, two])     # each once
    assert experiment_plan.planning_omit_from(False, None, env) == named   # a job's process
    assert experiment_plan.planning_omit_from(False, None, {}) == []
    assert plan.omitted_runs(experiment_plan.planning_omit_from(True, None, env)) == []
    assert env[experiment_plan.PLAN_OMIT_ENV] == ""        # a later main process hands on none
