"""Algorithm variants as users write them: `NAME@KEY=VALUE,KEY=VALUE` (bench's --algorithms,
the workflow's run ids), split and parsed into the registry name and its options."""
from __future__ import annotations

from ..errors import BfsError


def split_algorithms(args) -> list[str]:
    """--algorithms values -> variants: "merrill,2d" and "merrill 2d" both name two; in
    "merrill-do@rows=graph,bu=2x8,merrill" the item with "=" and no "@" is one more option of
    the variant before it."""
    variants: list[str] = []
    for item in (a for arg in args for a in arg.split(",") if a):
        if "=" in item and "@" not in item:
            if not variants or "@" not in variants[-1]:
                raise BfsError(f"--algorithms: option {item!r} follows no ALGORITHM@KEY=VALUE")
            variants[-1] += "," + item
        else:
            variants.append(item)
    return variants


def parse_algorithm(name: str) -> tuple[str, dict]:
    """'merrill@expand=v0,x=1' -> ('merrill', {'expand': 'v0', 'x': 1.0}): searcher options
    for measuring variants side by side (numbers become floats, the rest stay strings)."""
    base, _, opts = name.partition("@")
    options = {}
    for item in filter(None, opts.split(",")):
        key, eq, value = item.partition("=")
        if not eq:
            raise BfsError(f"algorithm option {item!r} in {name!r} is not KEY=VALUE")
        try:
            options[key] = float(value)
        except ValueError:
            options[key] = value
    return base, options
