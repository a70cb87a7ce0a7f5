"""bfs.nvtx: named profiler ranges, off unless BFS_NVTX=1 and then pushed and popped in order
through CuPy's NVTX module (faked here at that boundary; the GPU test uses the real one)."""
import sys
import types

import pytest

from bfs import nvtx
from bfs.errors import BfsError


class FakeNvtx(types.ModuleType):
    """cupy.cuda.nvtx as far as bfs.nvtx uses it: RangePush(message) and RangePop()."""

    def __init__(self):
        super().__init__("cupy.cuda.nvtx")
        self.calls = []

    def RangePush(self, message, id_color=-1):   # noqa: N802 (CuPy's names)
        self.calls.append(("push", message))

    def RangePop(self):   # noqa: N802
        self.calls.append(("pop", None))


@pytest.fixture
def fake(monkeypatch):
    """A fake cupy.cuda.nvtx in sys.modules, and bfs.nvtx made to read BFS_NVTX again."""
    module = FakeNvtx()
    monkeypatch.setitem(sys.modules, "cupy.cuda.nvtx", module)
    nvtx.reset()
    yield module
    nvtx.reset()


@pytest.mark.parametrize("value", [None, "", "0"])
def test_off_pushes_nothing_imports_nothing_and_formats_no_name(monkeypatch, value):
    if value is None:
        monkeypatch.delenv("BFS_NVTX", raising=False)
    else:
        monkeypatch.setenv("BFS_NVTX", value)
    # None in sys.modules makes any import of it fail: off must not try
    monkeypatch.setitem(sys.modules, "cupy.cuda.nvtx", None)
    nvtx.reset()
    try:
        class Unformattable:
            def __format__(self, spec):
                raise AssertionError("a name was formatted with ranges off")

        first = nvtx.level("merrill", Unformattable(), "top-down")
        with first:
            with nvtx.kernel1("sort"):
                pass
        assert nvtx.scope("x {}", Unformattable()) is first   # one shared do-nothing object
        assert not nvtx.enabled()
    finally:
        nvtx.reset()


def test_the_environment_is_read_once(monkeypatch, fake):
    monkeypatch.delenv("BFS_NVTX", raising=False)
    with nvtx.level("merrill", 0, "small"):
        pass
    monkeypatch.setenv("BFS_NVTX", "1")   # too late for this process
    with nvtx.level("merrill", 1, "top-down"):
        pass
    assert fake.calls == [] and not nvtx.enabled()


def test_on_pushes_and_pops_named_ranges_in_order(monkeypatch, fake):
    monkeypatch.setenv("BFS_NVTX", "1")
    with nvtx.kernel1("degrees"):
        pass
    with nvtx.level("merrill-do", 3, "bottom-up"):
        with nvtx.scope("inner"):
            pass
    with pytest.raises(KeyError):
        with nvtx.level("merrill", 4, "top-down"):
            raise KeyError("popped all the same")
    assert fake.calls == [("push", "bfs:kernel1:degrees"), ("pop", None),
                          ("push", "bfs:merrill-do:level 3 bottom-up"), ("push", "inner"),
                          ("pop", None), ("pop", None),
                          ("push", "bfs:merrill:level 4 top-down"), ("pop", None)]
    assert nvtx.enabled()


def test_on_without_cupy_is_a_one_line_error(monkeypatch):
    monkeypatch.setenv("BFS_NVTX", "1")
    monkeypatch.setitem(sys.modules, "cupy.cuda.nvtx", None)
    nvtx.reset()
    try:
        with pytest.raises(BfsError, match="BFS_NVTX=1 needs CuPy's NVTX"):
            nvtx.kernel1("sort")
    finally:
        nvtx.reset()


def test_the_module_imports_no_other_bfs_module():
    """bfs.nvtx sits beside bfs.device: the build stage (stage 3) and the algorithms import it,
    so it imports no later stage (its one import of bfs.errors is lazy, on the error path)."""
    import ast
    tree = ast.parse(open(nvtx.__file__).read())
    top_level = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert all(not (isinstance(n, ast.ImportFrom) and n.level) for n in top_level)
    assert all(not any(a.name.startswith(("bfs", "cupy")) for a in n.names)
               for n in top_level if isinstance(n, ast.Import))
