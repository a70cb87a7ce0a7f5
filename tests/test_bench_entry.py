"""bench/device.sh, the one entry point of the GPU measurements: its help lists every stage it
accepts, each stage it hands on has its script in bench/stages/, and an unknown stage is refused
by name before anything is written. (The box stage runs end to end in test_box_config.py.)"""
import re
import subprocess

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
