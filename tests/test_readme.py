"""The README against the code: its worked example runs and prints what it shows, every flag of
its command-line synopsis exists, its main-job description names what config.yaml runs."""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest
import yaml

from bfs.cli import build_parser
from helpers import ROOT

# a number that differs from run to run (a time, a rate, a size in KiB): not compared
MEASURED = re.compile(r"\d\.\d|\de[+-]\d")


def readme_section(title: str) -> str:
    text = (ROOT / "README.md").read_text()
    return text.split(f"\n## {title}", 1)[1].split("\n## ", 1)[0]


def worked_example() -> list[tuple[str, list[str]]]:
    """(command, the output lines shown after it) for each `$ ` line of the worked example."""
    steps = []
    for line in readme_section("A worked example").splitlines():
        if line.startswith("    $ "):
            steps.append((line[6:], []))
        elif line.startswith("    ") and steps:
            steps[-1][1].append(line[4:])
    return steps


def argv(command: str) -> list[str]:
    """The command with `bfs` run as this interpreter's `python -m bfs` (no install needed)."""
    words = shlex.split(command)
    at = words.index("bfs")
    return [*words[:at], sys.executable, "-m", "bfs", *words[at + 1:]]


@pytest.mark.mpi
@pytest.mark.slow
@pytest.mark.skipif(shutil.which("mpiexec") is None, reason="no mpiexec on PATH")
def test_worked_example_runs_and_prints_what_the_readme_shows(tmp_path):
    steps = worked_example()
    assert [shlex.split(c)[shlex.split(c).index("bfs") + 1] for c, _ in steps] == [
        "generate", "run", "validate", "partition", "partition", "run", "run", "verify",
        "report", "report"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for command, shown in steps:
        proc = subprocess.run(argv(command), capture_output=True, text=True, cwd=tmp_path,
                              env=env, stdin=subprocess.DEVNULL, timeout=300)
        assert proc.returncode == 0, f"{command}\n{proc.stderr}"
        printed = {" ".join(line.split()) for line in proc.stdout.splitlines()}
        for line in shown:
            if line != "..." and not MEASURED.search(line):
                assert " ".join(line.split()) in printed, f"{command}: {line!r} not printed"
    for path in ("tables/strong_scaling.md", "figures/strong_scaling.png", "runs/2d-1x2/parents"):
        assert (tmp_path / "work" / path).exists(), path


def subcommand(parser: argparse.ArgumentParser, words: list[str]) -> argparse.ArgumentParser:
    """The parser of `bfs WORDS...` (e.g. generate kronecker) as deep as the words go; of
    alternatives such as `table|figure`, the first."""
    for word in (w.split("|")[0] for w in words):
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs or word not in subs[0].choices:
            break
        parser = subs[0].choices[word]
    return parser


def test_every_flag_of_the_synopsis_exists():
    block = readme_section("The command line").strip("\n").split("\n\n", 1)[0]
    synopsis = [line.split("#")[0].strip() for line in block.splitlines()]
    assert len(synopsis) > 15
    for line in synopsis:
        words = line.split()
        parser = subcommand(build_parser(), words[words.index("bfs") + 1:])
        known = {s for a in parser._actions for s in a.option_strings}
        flags = set(re.findall(r"(?<![\w-])--?[a-z][a-z0-9-]*", line)) - {"-n"}  # mpiexec's
        assert flags <= known, f"{line}: {sorted(flags - known)} not options of {parser.prog}"


def test_main_job_description_names_the_default_configs_graphs_and_algorithms():
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    graphs = {name for kind in config["graphs"].values() for name in kind}
    algorithms = set()
    for experiment in config["experiments"].values():
        for key in ("algorithm", "algorithms", "serial"):
            value = experiment.get(key, [])
            algorithms |= {value} if isinstance(value, str) else set(value)
    text = " ".join(readme_section("The two commands").split("**Tests**")[0].split())
    missing = {name for name in graphs | algorithms
               if not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text)}
    assert not missing, f"the README's main job omits {sorted(missing)}"
