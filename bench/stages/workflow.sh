#!/usr/bin/env bash
# A stage of bench/device.sh (which sets the environment every stage shares: multicast off,
# mpiexec as root, PYTHONPATH, $OUT/gpu.txt); run it as `bash bench/device.sh STAGE ...`.
# The one-GPU workflow (config/one_gpu.yaml) end to end on a GPU machine, at small scales
# (Kronecker 16 and 18 instead of 20-24, 8 roots, fewer sweep points) so it fits one short call:
#   OUT=dir [SNAKEMAKE="python3 -m snakemake"] [TARGETS="results/tables/lambda.md ..."] \
#     bash bench/device.sh workflow
set -euo pipefail
WORK=${WORK:-/tmp/bfs-one-gpu}
rm -rf "$WORK" && mkdir -p "$WORK" && ln -s "$PWD/data" "$WORK/data"
python3 - "$WORK/config.yaml" <<'PY'
import sys, yaml
c = yaml.safe_load(open("config/one_gpu.yaml"))
c.update(results="results", roots=8)
c["graphs"]["kronecker"] = {"kron-s16": {"scale": 16}, "kron-s18": {"scale": 18},
                           **{f"kron-s16-e{e}": {"scale": 16, "edgefactor": e} for e in (8, 64)}}
ex = c["experiments"]
c["graphs"]["lattice"] = {"lattice-200x200": {"rows": 200, "cols": 200}}
ex["real_graphs"]["graphs"] = ["email-Eu-core", "p2p-Gnutella09", "kron-s18", "lattice-200x200"]
ex["implementations"]["graphs"] = ["kron-s16", "kron-s18"]
# Munguia's sweeps, fewer points: tasks 1 / 16 / 256, lambda 0 / 1000 / 100000, edge factors 8-64
ex["task_count_sweep"].update(graphs=["kron-s18", "p2p-Gnutella09"], tasks=[1, 16, 256])
ex["lambda_sweep"].update(graphs=["kron-s16-e8", "kron-s16", "kron-s16-e64"])
ex["lambda_sweep"]["lambda"] = [0, 1000, 100000]
yaml.safe_dump(c, open(sys.argv[1], "w"))
PY
smk() { ${SNAKEMAKE:-snakemake} "$@" -s "$PWD/Snakefile" -d "$WORK" --configfile "$WORK/config.yaml"; }
# TARGETS (optional): only these outputs, e.g. the sweeps' tables and figures; no report then
smk ${TARGETS:-} -c 16 --resources gpu=1 > "$OUT/workflow.log" 2>&1
if [ -z "${TARGETS:-}" ]; then
  smk --report "$WORK/results/report.html" >> "$OUT/workflow.log" 2>&1
  smk -n > "$OUT/second-dry-run.log" 2>&1
  cp "$WORK/results/report.html" "$OUT/"
fi
cp "$WORK"/results/tables/*.md "$WORK"/results/figures/*.png "$OUT/" 2>/dev/null || true
ls "$WORK"/results/runs/*/*/ > "$OUT/runs.txt"
python3 - "$WORK" <<'PY'
import json, sys, pathlib
for rj in sorted(pathlib.Path(sys.argv[1], "results/runs").glob("*/*/*/run.json")):
    r = json.loads(rj.read_text())
    print(rj.parent.relative_to(sys.argv[1]), r["parameters"]["backend"], r.get("validation", "cpu"),
          "valid" if r.get("valid", True) else "INVALID")
PY
grep -c "Nothing to be done\|nothing to be done" "$OUT/second-dry-run.log" || true
