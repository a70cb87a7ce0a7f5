"""The rules' conda environments (envs/*.yaml) list what pyproject.toml says their jobs need,
with the same lower bounds. Which job gets which environment: test_workflow.py."""
import re
import tomllib

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from helpers import ROOT

# What each environment carries besides the package's own dependencies: these extras. (The
# workflow extra's snakemake, its SLURM plugin and jsonschema drive the workflow, not its jobs;
# test and all are for developers.)
ENV_EXTRAS = {"cpu.yaml": ["mpi", "report"], "gpu.yaml": ["mpi", "report", "gpu"]}
# conda-forge's name for a PyPI package, where the two differ: CuPy's wheels are per CUDA major,
# conda-forge has one cupy whose CUDA cuda-version picks; NVIDIA's NCCL wheel is conda's nccl.
CONDA_NAME = {"cupy-cuda12x": "cupy", "cupy-cuda13x": "cupy", "nvidia-nccl-cu13": "nccl",
              "nvidia-nccl-cu12": "nccl"}
# conda entries that are no Python requirement: the interpreter, and CuPy's CUDA
CONDA_ONLY = {"cpu.yaml": {"python"}, "gpu.yaml": {"python", "cuda-version"}}

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
CONDA_SPEC = re.compile(r"([A-Za-z0-9_.-]+)\s*(.*)")


def requirements(extras):
    """The package's dependencies plus these extras', with bfs[...] self-references expanded."""
    reqs, todo, seen = list(PYPROJECT["dependencies"]), list(extras), set()
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for line in PYPROJECT["optional-dependencies"][extra]:
            req = Requirement(line)
            if canonicalize_name(req.name) == canonicalize_name(PYPROJECT["name"]):
                todo.extend(req.extras)
            else:
                reqs.append(line)
    return [Requirement(line) for line in reqs]


def lower_bound(specs):
    """The version after >= in a pip specifier set or a conda spec ('>=1.26', '>=13,<14')."""
    bounds = re.findall(r">=\s*([0-9][0-9A-Za-z.]*)", str(specs))
    assert len(bounds) == 1, f"want exactly one >= bound in {specs!r}"
    return bounds[0]


def conda_deps(env):
    """{name: spec} of an environment file's dependencies (no pip section expected)."""
    doc = yaml.safe_load((ROOT / "envs" / env).read_text())
    assert doc["channels"][0] == "conda-forge"
    deps = {}
    for entry in doc["dependencies"]:
        assert isinstance(entry, str), f"{env}: {entry!r} (a pip section?)"
        name, spec = CONDA_SPEC.fullmatch(entry.strip()).groups()
        assert name not in deps, f"{env}: {name} listed twice"
        deps[name] = spec
    return deps


def test_every_env_file_is_checked():
    assert {p.name for p in (ROOT / "envs").glob("*.yaml")} == set(ENV_EXTRAS)


@pytest.mark.parametrize("env", sorted(ENV_EXTRAS))
def test_env_lists_the_pyproject_requirements(env):
    want = {}
    for req in requirements(ENV_EXTRAS[env]):
        name = CONDA_NAME.get(canonicalize_name(req.name), canonicalize_name(req.name))
        want[name] = lower_bound(req.specifier)
    have = {name: spec for name, spec in conda_deps(env).items() if name not in CONDA_ONLY[env]}
    assert set(have) == set(want), (f"{env}: missing {sorted(set(want) - set(have))}, "
                                    f"not in pyproject.toml {sorted(set(have) - set(want))}")
    for name, bound in want.items():
        assert Version(lower_bound(have[name])) == Version(bound), \
            f"{env}: {name}{have[name]}, pyproject.toml >={bound}"


@pytest.mark.parametrize("env", sorted(ENV_EXTRAS))
def test_env_python_is_the_oldest_supported(env):
    assert conda_deps(env)["python"] == "=" + lower_bound(PYPROJECT["requires-python"])


def test_gpu_env_has_the_cuda_of_the_gpu_extra():
    """conda-forge's cupy builds for the CUDA major that cuda-version allows; the pip extra
    names it in the wheel (cupy-cuda13x): the two must agree."""
    (cupy,) = [r for r in requirements(["gpu"]) if r.name.startswith("cupy-cuda")]
    major = int(re.fullmatch(r"cupy-cuda(\d+)x", cupy.name).group(1))
    cuda = conda_deps("gpu.yaml")["cuda-version"]
    assert cuda == f">={major},<{major + 1}", cuda
    assert "cuda-version" not in conda_deps("cpu.yaml")
