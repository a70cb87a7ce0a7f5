"""Source lines of an algorithm's own files (bfs.report.sources, SEI report Table 1)."""
from bfs.algorithms import ALGORITHMS
from bfs.report.sources import algorithm_files, algorithm_source_lines, source_lines


def test_python_lines_skip_blanks_comments_and_docstrings(tmp_path):
    path = tmp_path / "m.py"
    path.write_text('"""Module docstring\nover two lines."""\n'
                    "import os  # a trailing comment keeps the line\n"
                    "\n"
                    "# a comment line\n"
                    "def f(x):\n"
                    "    '''f's docstring'''\n"
                    "    s = '''a string\n"
                    "that is code'''\n"
                    "    return x, s\n")
    assert source_lines(path) == 5  # import, def, two lines of the assignment, return


def test_cuda_lines_skip_blanks_and_comments(tmp_path):
    path = tmp_path / "k.cu"
    path.write_text("// header comment\n"
                    "/* a block\n   comment */\n"
                    "__global__ void k(int *a) {  // trailing\n"
                    "\n"
                    "    a[0] = 1; /* inline */\n"
                    "}\n")
    assert source_lines(path) == 3


def test_every_registered_algorithm_has_its_own_files_counted():
    for name, spec in ALGORITHMS.items():
        for backend, module in spec.modules.items():
            files = algorithm_files(module)
            assert files[0].name == module.rsplit(".", 1)[1] + ".py"
            assert algorithm_source_lines(name, backend) == sum(map(source_lines, files)) > 10
    # the CUDA files a GPU module loads count for it (merrill's kernels and its level loop);
    # the shared headers (tiles.cuh, claim.cuh) for nobody
    names = [p.name for p in algorithm_files(ALGORITHMS["merrill"].modules["gpu"])]
    assert names == ["merrill.py", "merrill.cu", "level_loop.cu"]
    assert "fu_2d.cu" in [p.name for p in algorithm_files(ALGORITHMS["2d"].modules["gpu"])]
    assert algorithm_source_lines("merrill", "cpu") is None
