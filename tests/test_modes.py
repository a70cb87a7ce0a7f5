"""Every output, made under a temporary name and renamed into place, has the modes the umask
gives (a group on a shared file system reads what a umask of 022 shares), never tempfile's
private 0o700 / 0o600."""
import hashlib
import os
import stat

import pytest

from bfs.atomic import atomic_dir, atomic_write
from bfs.cli import main


@pytest.fixture
def umask(request):
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


def modes(top):
    """{path relative to top: permission bits} of everything under top."""
    return {str(p.relative_to(top)): stat.S_IMODE(p.stat().st_mode) for p in top.rglob("*")}


@pytest.mark.parametrize("umask", [0o022, 0o077], indirect=True, ids=["022", "077"])
def test_outputs_have_the_umasks_modes(tmp_path, umask, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.chdir(out)
    source = tmp_path / "source.txt"
    source.write_text("0 1\n1 2\n")
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    for argv in (["generate", "kronecker", "--scale", "6", "--cache", "cache", "--out", "g"],
                 ["generate", "lattice", "--rows", "3", "--cols", "3", "--out", "lattice"],
                 ["partition", "g", "--grid", "1x2", "--cache", "cache", "--out", "p"],
                 ["run", "g", "--algorithm", "seq-csr", "--roots", "2", "--save-parents", "1",
                  "--out", "r"],
                 ["validate", "r", "--report", "v.json"],
                 ["fetch", source.as_uri(), "--sha256", digest, "--out", "fetched/f.txt"],
                 ["report", "table", "graphs", "r", "--out", "tables/graphs"],
                 ["report", "figure", "teps_vs_scale", "r", "--out", "figures/teps"]):
        assert main(argv) == 0, argv
    found = modes(out)
    for rel in ("g", "g/graph.json", "g/edges/part-00000.parquet", "lattice", "p",
                "p/manifest.json", "r", "r/run.json", "r/parents", "v.json",
                "fetched/f.txt", "tables/graphs.csv", "tables/graphs.md", "figures/teps.png",
                "figures/teps.svg", "cache/graphs", "cache/partitions"):
        assert rel in found, rel
    wrong = {rel: oct(mode) for rel, mode in found.items()
             if mode != (0o777 if (out / rel).is_dir() else 0o666) & ~umask}
    assert not wrong, f"umask {umask:03o}: {wrong}"
    assert not [rel for rel in found if ".tmp-" in rel]   # no temporary left behind


def test_failed_outputs_leave_nothing(tmp_path):
    def fail(_):
        raise OSError("disk full")
    with pytest.raises(OSError), atomic_dir(tmp_path / "d") as tmp:
        (tmp / "half").write_text("x")
        fail(tmp)
    with pytest.raises(OSError):
        atomic_write(tmp_path / "f", fail)
    assert list(tmp_path.iterdir()) == []
