"""The COST table of `bench/device.sh grid cost`: per scale, the 1x1-grid searches (2d-do,
2d) against the single-GPU ones (merrill-do, merrill) of the same call, GTEPS and Kernel 1.

    python3 bench/cost_table.py OUT/s25-single.json ...   (each beside its s25-1x1.json)

Kernel 1, from the device edge list to a searcher ready to search: each algorithm's whole
build() (the harness's construction_time, bench.json's kernel1_s): for a single-GPU search the
CSR and the searcher's own construction (search state, and merrill-do's hubs-first copy, 32-bit
offsets and head copy); for the grid, its block's, which does the same work.
"""
import json
import sys
from pathlib import Path

PAIRS = (("2d-do", "merrill-do"), ("2d", "merrill"))


def main(paths: list[str]) -> None:
    print("| scale | grid search | GTEPS | single-GPU search | GTEPS | ratio | Kernel 1 grid"
          " / single | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for path in map(Path, paths):
        single = json.loads(path.read_text())
        grid = json.loads(path.with_name(path.name.replace("-single", "-1x1")).read_text())
        for rec, grec in zip(single["records"], grid["records"]):
            for g_name, s_name in PAIRS:
                s, g = rec["algorithms"][s_name], grec["algorithms"][g_name]
                k1_single = s["kernel1_s"]
                gt, st = g["hmean_teps"] / 1e9, s["hmean_teps"] / 1e9
                print(f"| {rec['scale']} | {g_name} 1x1 | {gt:.2f} | {s_name} | {st:.2f} | "
                      f"{gt / st:.3f} | {g['kernel1_s']:.3f} s / {k1_single:.3f} s | "
                      f"{g['kernel1_s'] / k1_single:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
