"""Source lines of each algorithm's own files (SEI report Fig. 19 / Table 1: TEPS vs code size).

An algorithm's files are the registry's module for a backend (AlgorithmSpec.modules) and the
CUDA files that module loads itself (`with_name("x.cu")`); shared helpers (tiles, device_csr,
the build stage's Kernel 1, the harness) are counted for nobody. A line counts when it holds
code: blank lines, comments and Python docstrings do not.
"""
from __future__ import annotations

import importlib.util
import io
import re
import tokenize
from pathlib import Path

_CUDA_LOAD = re.compile(r"""with_name\(\s*["']([\w.-]+\.cuh?)["']\s*\)""")
_SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
         tokenize.ENDMARKER, tokenize.ENCODING}


def _python_lines(text: str) -> int:
    code: set[int] = set()
    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    for i, tok in enumerate(tokens):
        if tok.type in _SKIP:
            continue
        if tok.type == tokenize.STRING:
            before = next((t for t in reversed(tokens[:i]) if t.type not in
                           (tokenize.NL, tokenize.COMMENT)), None)
            after = tokens[i + 1] if i + 1 < len(tokens) else None
            statement_start = before is None or before.type in (
                tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING)
            if statement_start and after is not None and after.type in (
                    tokenize.NEWLINE, tokenize.ENDMARKER):
                continue  # a bare string statement: a docstring
        code.update(range(tok.start[0], tok.end[0] + 1))
    return len(code)


def _c_lines(text: str) -> int:
    # drop /* */ blocks (keeping their newlines) and // comments; string literals holding
    # comment markers are rare enough in kernels to be ignored
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return sum(1 for line in text.splitlines() if line.split("//", 1)[0].strip())


def source_lines(path) -> int:
    """Non-blank, non-comment lines of a Python (.py: docstrings excluded too) or CUDA / C
    (.cu, .cuh, .c, .h) file."""
    path = Path(path)
    text = path.read_text()
    return _python_lines(text) if path.suffix == ".py" else _c_lines(text)


def algorithm_files(module: str) -> list[Path]:
    """The module's file and the CUDA files it loads by name from its own directory."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ValueError(f"no source file for module {module}")
    origin = Path(spec.origin)
    cuda = dict.fromkeys(_CUDA_LOAD.findall(origin.read_text()))
    return [origin, *(origin.with_name(name) for name in cuda
                      if origin.with_name(name).is_file())]


def algorithm_source_lines(algorithm: str, backend: str) -> int | None:
    """Source lines of an algorithm's own files for a backend; None where the registry has
    no such algorithm or backend."""
    from ..algorithms import ALGORITHMS
    spec = ALGORITHMS.get(algorithm)
    if spec is None or backend not in spec.modules:
        return None
    return sum(source_lines(p) for p in algorithm_files(spec.modules[backend]))
