"""bench/device.sh, the one entry point of the GPU measurements: its help lists every stage it
accepts, each stage it hands on has its script in bench/stages/, and an unknown stage is refused
by name before anything is written. (The box stage runs end to end in test_box_config.py.)"""
import re
import subprocess
import sys
from pathlib import Path

from helpers import ROOT

SCRIPT = ROOT / "bench" / "device.sh"


def run(*args, **env):
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True,
                          cwd=ROOT, env={"PATH": "/usr/bin:/bin", **env}, timeout=60)


def test_help_lists_every_stage_and_each_handed_on_stage_has_its_script():
    text = SCRIPT.read_text()
    accepted = re.search(r"\n    (tests\|[a-z|-]+)\) ;;", text).group(1).split("|")
    helped = run("help")
    assert helped.returncode == 0
    stages = helped.stdout.split("Stages", 1)[1]
    listed = re.findall(r"^  ([a-z-]+)\b", stages, re.M)
    assert listed == accepted, (listed, accepted)
    inline = set(re.findall(r"^(tests|loop|energy|compare)\)$", text, re.M))
    assert inline == {"tests", "loop", "energy", "compare"}
    for stage in set(accepted) - inline:
        assert (ROOT / "bench" / "stages" / f"{stage.replace('-', '_')}.sh").is_file(), stage


def test_an_unknown_stage_is_refused_by_name_and_writes_nothing(tmp_path):
    out = tmp_path / "out"
    refused = run("nope", OUT=str(out))
    assert refused.returncode == 2
    assert "no stage 'nope'" in refused.stderr
    assert not out.exists()


def test_trees_runs_each_version_from_inside_its_own_tree(tmp_path):
    """The trees stage alternates one bench between this tree and an older one, each started
    inside its folder: `python -m bfs` puts the working directory first on sys.path, so an
    older tree named only by PYTHONPATH would silently run this one. The older tree here is a
    stand-in bfs that says where it was imported from; this tree's is the real one."""
    old = tmp_path / "old" / "bfs"
    old.mkdir(parents=True)
    (old / "__init__.py").write_text("")
    (old / "__main__.py").write_text("import bfs, sys\nprint('tree', bfs.__file__, sys.argv[1:])\n")
    out = tmp_path / "out"
    done = run("trees", str(tmp_path / "old"), "1", "--", "--help", OUT=str(out),
               PATH=f"{Path(sys.executable).parent}:/usr/bin:/bin")
    assert done.returncode == 0, done.stdout + done.stderr
    old_log = (out / "old-1.log").read_text()
    assert f"tree {old / '__init__.py'}" in old_log and "'--help'" in old_log
    new_log = (out / "new-1.log").read_text()
    assert "usage:" in new_log and "tree " not in new_log
    missing = run("trees", str(tmp_path / "nowhere"), OUT=str(out))
    assert missing.returncode == 2 and "is not a folder" in missing.stderr
