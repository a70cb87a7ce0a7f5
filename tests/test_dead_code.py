"""No code that nothing uses: vulture over the package, the workflow's planner and its slot
launcher, reading the tests, bench/ and the Snakemake files as the places that use them (a name
vulture reports that a rule, a stage script or the report's templates spell counts as used).
The names it cannot see used are listed in IGNORED, each with why."""
import re
import subprocess
import sys

from helpers import ROOT

IGNORED = {
    "exc": "`def __exit__(self, *exc)`: the context-manager protocol's arguments",
    "bfs_version": "GraphMeta's field: written to graph.json by dataclasses.asdict",
    "writeable": "numpy's `array.flags.writeable = False`: a cached table made read-only",
    "colon": "`kind, colon, rest = text.partition(':')`: the separator partition returns",
}


def test_nothing_in_the_package_is_unused():
    scanned = ["bfs", "workflow/experiment_plan.py", "workflow/gpu_slots.py", "tests", "bench"]
    out = subprocess.run([sys.executable, "-m", "vulture", *scanned, "--min-confidence", "60",
                          "--ignore-names", ",".join(IGNORED)],
                         cwd=ROOT, capture_output=True, text=True).stdout
    spelled = " ".join(p.read_text() for p in [ROOT / "Snakefile",
                                               *(ROOT / "workflow").rglob("*.smk"),
                                               *(ROOT / "workflow" / "report").rglob("*.rst"),
                                               *(ROOT / "bench").rglob("*.sh")])
    unused = []
    for line in out.splitlines():
        m = re.match(r"(\S+):\d+: unused \w+ '(\w+)'", line)
        if m and m.group(1).startswith(("bfs/", "workflow/")) \
                and not re.search(rf"\b{m.group(2)}\b", spelled):
            unused.append(line)
    assert not unused, "\n".join(unused)
