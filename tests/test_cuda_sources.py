"""Every CUDA source compiles, here, without a GPU: NVRTC (the compiler CuPy runs on the device;
the nvidia-cuda-nvrtc wheel of the CUDA major CuPy is built for) over each .cu file of the
package as bfs.device.cuda_source inlines it, with every template instantiation the searchers
name (their own tables), for the GPUs the tool runs on (Hopper, compute_90). A mistake in a
kernel is then a failed test in CI, not a failed device call.
"""
import ctypes
import itertools
import sys
from pathlib import Path

import pytest

from bfs.device import cuda_source

ROOT = Path(__file__).resolve().parents[1]
ARCH = "compute_90"


@pytest.fixture(scope="module")
def nvrtc():
    try:
        import nvidia.cu13
    except ImportError:
        if sys.platform.startswith("linux"):    # the test extra installs it there
            raise
        pytest.skip("NVRTC's wheels (the test extra's nvidia-cuda-nvrtc) are Linux and Windows "
                    "only")
    lib, = (p for d in nvidia.cu13.__path__ for p in Path(d, "lib").glob("libnvrtc.so.*")
            if "builtins" not in p.name and "alt" not in p.name)
    return ctypes.CDLL(str(lib))


def compile_cuda(nvrtc, path: Path, names=()) -> tuple[int, str]:
    """(NVRTC's result, its log) for one source and its name expressions."""
    prog = ctypes.c_void_p()
    assert nvrtc.nvrtcCreateProgram(ctypes.byref(prog), cuda_source(path).encode(),
                                    path.name.encode(), 0, None, None) == 0
    try:
        for name in names:
            assert nvrtc.nvrtcAddNameExpression(prog, name.encode()) == 0
        opts = [b"-std=c++17", f"--gpu-architecture={ARCH}".encode()]
        rc = nvrtc.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
        size = ctypes.c_size_t()
        nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        nvrtc.nvrtcGetProgramLog(prog, log)
        return rc, log.value.decode(errors="replace")
    finally:
        nvrtc.nvrtcDestroyProgram(ctypes.byref(prog))


def name_expressions() -> dict[str, tuple[str, ...]]:
    """The template instantiations each templated source is loaded with (load_module's
    name_expressions), from the modules' own tables: every merrill expand variant, every
    validation edge type, and merrill-do's bottom-up in every shape (32-bit offsets, no tail)
    and in the default shape with each offset width, tail list and block-id setting (2d-do's)."""
    from bfs.algorithms import merrill, merrill_do
    from bfs.validate import gpu
    bottom_up = {merrill_do.bottom_up_kernel(bu, "u32") for bu in merrill_do.BOTTOM_UP_VARIANTS}
    bottom_up |= {merrill_do.bottom_up_kernel(merrill_do.BOTTOM_UP, o, tail, ids)
                  for o, tail, ids in itertools.product(("u32", "i64"), (False, True),
                                                        (False, True))}
    return {"merrill.cu": tuple(v for v in merrill.EXPAND_VARIANTS.values() if "<" in v),
            "merrill_do.cu": tuple(sorted(bottom_up)),
            "validate.cu": tuple(gpu.EDGE_TYPES.values())}


SOURCES = sorted((ROOT / "bfs").rglob("*.cu"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_every_cuda_source_compiles(nvrtc, path):
    rc, log = compile_cuda(nvrtc, path, name_expressions().get(path.name, ()))
    assert rc == 0, f"{path.relative_to(ROOT)} does not compile for {ARCH}:\n{log}"


def test_a_broken_kernel_is_caught(nvrtc, tmp_path):
    """The check itself: a kernel with a type error fails, naming the line."""
    bad = tmp_path / "bad.cu"
    bad.write_text('#include "tiles.cuh"\n'
                   'extern "C" __global__ void k(u64* x) { x[0] = undeclared_name; }\n')
    (tmp_path / "tiles.cuh").write_text((ROOT / "bfs/algorithms/tiles.cuh").read_text())
    rc, log = compile_cuda(nvrtc, bad)
    assert rc != 0 and "undeclared_name" in log and "bad.cu" in log
