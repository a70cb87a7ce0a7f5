"""An algorithm's options, declared once: each registry entry (bfs.algorithms.ALGORITHMS) lists
its `Option`s, and everything else is derived from them:

    `bfs run`'s algorithm flags          run_flags / options_from_args (bfs.cli)
    NAME@KEY=VALUE variants              split_algorithms / parse_algorithm (bench's
                                         --algorithms, bfs run --algorithm)
    the workflow's run ids               variant_name / parse_variant (workflow/rules/common.smk)
    and the flags of each run's job      variant_flags
    the config schema's option keys      value_schema (common.smk injects them)

An option is named in a run id only where an experiment sets or sweeps it (`sweep`): the id
must tell two runs apart whenever their commands differ.
"""
from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import BfsError

# --- value parsers: text -> value, raising ArgumentTypeError (argparse's one-line error) ------


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def nonnegative_int(text: str) -> int:
    value = int(text, 0)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def auto_or_nonnegative_int(text: str) -> str | int:
    return "auto" if text == "auto" else nonnegative_int(text)


def positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {value}")
    return value


def nonnegative_float(text: str) -> float:
    value = float(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def unit_float(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be in [0, 1], got {value}")
    return value


def byte_count(text: str) -> int:
    from ..device import parse_bytes
    try:
        return parse_bytes(text)
    except BfsError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def bottom_up_floor(n: int, floor, alpha: float, algorithm: str) -> tuple[float, int]:
    """The floor option of a direction-optimizing search (merrill-do, 2d-do), checked, and the
    rule it sets: a frontier of fewer than n * floor edges stays top-down, with no floor where
    alpha is inf (which sends every frontier bottom-up). Returns (floor, the edges)."""
    floor = float(floor)
    if not floor >= 0:
        raise BfsError(f"{algorithm}: floor must be >= 0, got {floor:g}")
    return floor, int(n * floor) if alpha != float("inf") else 0


def integral(value) -> str:
    """A whole number as a run id writes it: 1000.0 -> '1000'."""
    return str(int(value))


# JSON schema of the values each parser accepts (the config's option keys)
PARSER_SCHEMAS = {
    positive_int: {"type": "integer", "minimum": 1},
    nonnegative_int: {"type": "integer", "minimum": 0},
    int: {"type": "integer"},
    positive_float: {"type": "number", "exclusiveMinimum": 0},
    nonnegative_float: {"type": "number", "minimum": 0},
    unit_float: {"type": "number", "minimum": 0, "maximum": 1},
    float: {"type": "number"},
}


@dataclass(frozen=True)
class Option:
    """One option of one or more algorithms. Shared options (comm, exchange) are one object
    that several registry entries list, so their flag and help are written once."""

    name: str                      # the ctx.options key, KEY in NAME@KEY=VALUE, the config's key
    help: str                      # what it does (the flag's help prefixes the algorithms' names)
    parse: Callable[[str], Any] = str   # text -> value (a flag's argparse type)
    # a value; {backend: value} where the backends differ; None: the module decides (the runner
    # records in run.json what ran, e.g. 2d-do's alpha and beta, every distributed run's comm)
    default: Any = None
    choices: tuple = ()
    flag: bool = False             # also a `bfs run --NAME` flag ("_" written "-"); the rest are
                                   # NAME@KEY=VALUE only (tuning knobs for bench)
    dest: str | None = None        # the argparse attribute where `name` is a Python keyword
    metavar: str | None = None
    # Sweepable: an experiment may set it or sweep it (a run per value), and the run id names
    # the value as id_prefix + id_text(value), which id_pattern (regex) reads back.
    sweep: bool = False
    id_prefix: str = ""
    id_text: Callable[[Any], str] = str
    id_pattern: str = ""           # default: the choices
    id_always: bool = False        # named in every run id of its algorithms (2d's exchange)
    id_omits_default: bool = False  # left out where it is the backend's default (comm, mode)
    id_rank: int = 1               # the id's parts go by rank, then declaration order
    # named together (hybrid's setting: no default hides in the id of a run a sweep chose)
    together: tuple[str, ...] = ()
    only_when: tuple[str, Any] | None = None   # means something only while KEY has VALUE
    # the config's top-level NAME gives its value to runs whose id does not name it
    config_wide: bool = False
    # backends whose runs have only the default: their commands leave the flag out
    fixed_on: tuple[str, ...] = ()
    config_schema: dict | None = None   # a config value's JSON schema, where not the parser's
    # steers what ranks exchange (comm, exchange): a search on one rank is the same search
    # whatever its value, so the workflow plans it once (the first value an experiment lists)
    between_ranks: bool = False

    def __post_init__(self):
        if self.sweep and not (self.id_prefix or self.id_pattern or self.choices):
            raise ValueError(f"option {self.name}: a sweepable option needs a run-id form")

    @property
    def flag_name(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def attr(self) -> str:
        return self.dest or self.name

    def default_for(self, backend: str | None):
        if isinstance(self.default, dict):
            return self.default.get(backend)
        return self.default

    def value(self, text: str, algorithm: str = ""):
        """The typed value of `text`, checked (BfsError naming the key and the value)."""
        try:
            value = self.parse(text)
        except (ValueError, TypeError, argparse.ArgumentTypeError) as e:
            raise BfsError(f"{algorithm}@{self.name}={text}: {e}") from None
        if self.choices and value not in self.choices:
            raise BfsError(f"{algorithm}@{self.name}={text}: choose one of "
                           + ", ".join(map(str, self.choices)))
        return value

    def token(self, value) -> str:
        return f"{self.id_prefix}{self.id_text(value)}"

    def token_regex(self) -> str:
        pattern = self.id_pattern or "|".join(re.escape(str(c)) for c in self.choices)
        return f"{re.escape(self.id_prefix)}(?:{pattern})"

    def schema(self) -> dict:
        """JSON schema of one value in a config (an experiment's setting or swept value)."""
        if self.config_schema is not None:
            return dict(self.config_schema)
        if self.choices:
            return {"enum": list(self.choices)}
        return dict(PARSER_SCHEMAS.get(self.parse, {"type": "string"}))


# --- the registry's options, and bfs run's flags ------------------------------------------


def registry():
    from . import ALGORITHMS
    return ALGORITHMS


def all_options() -> dict[str, Option]:
    """name -> Option over every algorithm (a shared option once). Two different options of
    one name would give one flag or config key two meanings: refused."""
    found: dict[str, Option] = {}
    for spec in registry().values():
        for option in spec.options:
            if found.setdefault(option.name, option) != option:
                raise ValueError(f"option {option.name!r} is declared twice, differently "
                                 f"(algorithm {spec.name}): declare it once and share it")
    return found


def algorithms_taking(name: str) -> list[str]:
    return [spec.name for spec in registry().values()
            if any(o.name == name for o in spec.options)]


def add_run_flags(parser: argparse.ArgumentParser) -> None:
    """Every flag option of the registry as a `bfs run` flag. The parser default is None, so
    that a flag given to an algorithm without it is told apart from one left out; the help
    states the declared default instead."""
    for option in all_options().values():
        if not option.flag:
            continue
        text = f"{', '.join(algorithms_taking(option.name))}: {option.help}"
        default = option.default
        if default is not None and "default" not in option.help:
            shown = (", ".join(f"{v} on {b}" for b, v in default.items())
                     if isinstance(default, dict) else _shown(default))
            text += f" (default: {shown})"
        parser.add_argument(option.flag_name, dest=option.attr, type=option.parse,
                            choices=option.choices or None, metavar=option.metavar, help=text)


def _shown(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def options_from_args(algorithm: str, args, given: dict | None = None) -> dict:
    """The options of a `bfs run`: `given` (from --algorithm NAME@KEY=VALUE) and the flags,
    each checked against the algorithm's declarations, then its declared single defaults
    (per-backend ones and None are the module's to choose; run.json records what ran)."""
    spec = registry()[algorithm]
    declared = {o.name: o for o in spec.options}
    options = dict(given or {})
    for option in all_options().values():
        value = getattr(args, option.attr, None) if option.flag else None
        if value is None:
            continue
        if option.name not in declared:
            raise BfsError(f"{option.flag_name} is not an option of {algorithm} "
                           f"({_options_named(spec)})")
        options[option.name] = value
    for option in spec.options:
        if option.name not in options and option.default is not None \
                and not isinstance(option.default, dict):
            options[option.name] = option.default
    # run.json is strict JSON: an infinite value (hybrid's --lambda inf) is recorded as "inf"
    return {k: "inf" if v == float("inf") else v for k, v in options.items()}


def _options_named(spec) -> str:
    names = [o.name for o in spec.options]
    return f"its options: {', '.join(names)}" if names else "it takes no options"


# --- NAME@KEY=VALUE --------------------------------------------------------------------


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
    """'merrill@expand=v0,order=degree' -> ('merrill', {'expand': 'v0', 'order': 'degree'}):
    the registry name and its options, typed and checked by the algorithm's declarations."""
    from . import get_algorithm
    base, _, opts = name.partition("@")
    spec = get_algorithm(base)
    declared = {o.name: o for o in spec.options}
    options = {}
    for item in filter(None, opts.split(",")):
        key, eq, value = item.partition("=")
        if not eq:
            raise BfsError(f"algorithm option {item!r} in {name!r} is not KEY=VALUE")
        if key not in declared:
            raise BfsError(f"{base} has no option {key!r} ({_options_named(spec)})")
        options[key] = declared[key].value(value, base)
    return base, options


# --- run ids ---------------------------------------------------------------------------
# A run id's variant names the run's settings in a fixed order, one part each ("scan",
# "sf1000", "mpi", "fixed", "t64", "s0.5"), joined by "-"; "default" when none is named.


def named_settings(spec, backend: str, settings: dict) -> list[tuple[Option, Any]]:
    """(option, value) of what a run id names: the settings an experiment gave (those of
    this algorithm), the options named always, and those named together with one given;
    less the values a backend's default leaves out and the options meaningless here."""
    values = {}
    for option in spec.options:
        if option.name in settings and settings[option.name] is not None:
            values[option.name] = settings[option.name]
        elif option.id_always or any(k in settings for k in option.together):
            values[option.name] = option.default_for(backend)
    named = []
    for option in spec.options:
        if option.name not in values or not option.sweep:
            continue
        value = values[option.name]
        if option.only_when and values.get(option.only_when[0]) != option.only_when[1]:
            continue
        if option.id_omits_default and value == option.default_for(backend):
            continue
        named.append((option, value))
    return sorted(named, key=lambda ov: ov[0].id_rank)   # stable: declaration order within


def variant_name(spec, backend: str, settings: dict) -> str:
    parts = [option.token(value) for option, value in named_settings(spec, backend, settings)]
    return "-".join(parts) or "default"


def parse_variant(spec, variant: str) -> dict:
    """A variant's named settings {option name: value} (a repeat's -rN stripped)."""
    variant = re.sub(r"-r[0-9]+$", "", variant)
    if variant == "default":
        return {}
    settings = {}
    for part in variant.split("-"):
        option = next((o for o in spec.options
                       if o.sweep and re.fullmatch(o.token_regex(), part)), None)
        if option is None:
            raise BfsError(f"run id part {part!r} names no option of {spec.name}")
        settings[option.name] = option.value(part[len(option.id_prefix):], spec.name)
    return settings


def variant_regex() -> str:
    """Every variant any algorithm's run id can have (the workflow's wildcard constraint)."""
    tokens = "|".join(o.token_regex() for o in all_options().values() if o.sweep)
    return rf"(?:default|(?:{tokens})(?:-(?:{tokens}))*)(?:-r[0-9]+)?"


def variant_flags(spec, backend: str, variant: str, config: dict) -> list[tuple[Option, Any]]:
    """(option, value) of the `bfs run` flags of a run id: what the id names; else the config's
    workflow-wide value (config_wide); else the backend's default where the id leaves it out
    as that default (comm on a GPU: nccl), except on backends with no other choice."""
    named = parse_variant(spec, variant)
    flags = []
    for option in spec.options:
        if option.name in named:
            value = named[option.name]
        elif option.config_wide and option.name in config:
            value = config[option.name]
        elif option.id_omits_default and backend not in option.fixed_on and (
                not option.together or any(k in named for k in option.together)):
            value = option.default_for(backend)
        else:
            continue
        if value is not None and option.flag:
            flags.append((option, value))
    return flags


def flags_text(flags: list[tuple[Option, Any]]) -> str:
    return " ".join(f"{o.flag_name} {command_text(v)}" for o, v in flags)


def command_text(value) -> str:
    """A value as a command line writes it: 1000000.0 -> 1000000, 0.5 -> 0.5 (exact)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value) if isinstance(value, float) else str(value)


# --- a hook for algorithms outside the package ------------------------------------------

EXTRA_ALGORITHMS = "BFS_EXTRA_ALGORITHMS"


def extra_registry_modules() -> list[str]:
    """Modules named by BFS_EXTRA_ALGORITHMS (comma-separated) whose ALGORITHMS (a list of
    AlgorithmSpec) join the registry: an algorithm kept outside bfs/algorithms/, or a test's
    toy, seen by `bfs run` and by the workflow alike (a child process inherits it)."""
    return [m for m in os.environ.get(EXTRA_ALGORITHMS, "").split(",") if m]
