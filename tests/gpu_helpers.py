"""What the GPU test files share: the skip without a GPU, merrill's build, the check of a
searcher's levels and trees against the CPU's, and random edge lists."""
import numpy as np
import pytest

try:
    import cupy as cp
    _N_GPUS = cp.cuda.runtime.getDeviceCount()
    _WHY = "" if _N_GPUS > 0 else "CuPy sees no CUDA device"
except Exception as e:  # ImportError, or a CUDA runtime/driver error
    cp = None
    _WHY = f"no CuPy/CUDA GPU: {type(e).__name__}: {e}"

from bfs.algorithms import EdgeList, RunContext, get_algorithm
from bfs.algorithms.seq_csr import bfs_csr
from bfs.build.csr_cpu import build_csr
from bfs.validate import validate


def require_gpu() -> None:
    """Called at a GPU test module's top: the whole module skipped, with the reason, without
    CuPy or a CUDA device."""
    if _WHY:
        pytest.skip(_WHY, allow_module_level=True)


def merrill(src, dst, n, name="merrill", **options):
    # build() passes ctx.options to the searcher as keywords (what `bfs run` checked)
    return get_algorithm(name).load("gpu").build(EdgeList(src, dst, n),
                                                 RunContext("gpu", options))


def check_against_cpu(searcher, src, dst, n, roots):
    csr = build_csr(src, dst, n)
    for root in roots:
        root = int(root)
        searcher.search(root)
        res = searcher.gather(n)
        assert res.parent.dtype == np.int64 and res.level.dtype == np.int32
        assert res.parent.shape == (n,) and res.level.shape == (n,)
        _, ref_level = bfs_csr(csr.offsets, csr.columns, root)
        np.testing.assert_array_equal(res.level, ref_level, err_msg=f"root {root}")
        check = validate(src, dst, res.parent, root, res.level)
        assert check.valid, f"root {root}: {check.message}"
        assert searcher.nedge() == check.nedge


def random_edges(rng, n, m, dtype=np.uint32):
    src = rng.integers(0, n, m).astype(dtype)
    dst = rng.integers(0, n, m).astype(dtype)
    if m >= 20:
        src[:5], dst[:5] = src[5:10], dst[5:10]   # duplicates
        dst[10:15] = src[10:15]                    # self-loops
    return src, dst
