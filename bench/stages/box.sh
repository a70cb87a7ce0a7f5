#!/usr/bin/env bash
# A stage of bench/device.sh (which sets the environment every stage shares: multicast off,
# mpiexec as root, PYTHONPATH, $OUT/gpu.txt); run it as `bash bench/device.sh STAGE ...`.
# The GPU-box workflow (config/gpu_box.yaml) end to end on a multi-GPU machine at two chosen
# scales (strong scaling at both, weak scaling S1 on 1 GPU -> S2 on 2), snakemake importable:
#   OUT=dir S1=23 S2=24 ROOTS=32 [CONFIG=config/gpu_box_small.yaml] bash bench/device.sh box
# WEAK="23 24 25" runs weak scaling at those scales on 1, 2, 4 GPUs (1xP grids) instead.
# Tables, figures, the report and a list of runs (with their validation) go to $OUT.
# A device call lasts 10 minutes, so the full config (scales 26-28) runs an experiment a call on
# a machine kept warm: KEEP=1 keeps the last call's $WORK (snakemake runs only what is missing)
# and TARGETS names what to make this call, e.g. TARGETS=results/tables/strong_scaling.md (the
# report is made only by a call without TARGETS); AS_IS=1 runs CONFIG at its own scales:
#   AS_IS=1 KEEP=1 TARGETS=results/tables/weak_scaling_at_the_memory_limit-weak_scaling.md \
#     OUT=dir bash bench/device.sh box
# Across calls on machines that were not kept: LIMIT=540 stops snakemake (SIGTERM) that many
# seconds after the stage started (RESUME's graphs and partitions count: a call that gave the
# main run its 500 s after 160 s of them ran past the device's 600 and packed nothing) in time to
# pack every validated run (run directory less its saved parents, and its verdict) into
# $OUT/results.tar.gz; the next call, given that file as RESUME=path (carried), unpacks it
# first and snakemake makes only what is missing. OMIT="PATH ..." leaves those runs out
# (--omit-from), with the tables and figures that need them; the landing page names them.
set -euo pipefail
stage_start=$(date +%s)   # LIMIT counts from here
S1=${S1:-26} S2=${S2:-27} ROOTS=${ROOTS:-64}
WORK=${WORK:-/tmp/bfs-gpu-box}
GPUS=$(nvidia-smi -L | wc -l)
if [ -z "${KEEP:-}" ] || [ ! -d "$WORK" ]; then
  rm -rf "$WORK" && mkdir -p "$WORK" && ln -s "$PWD/data" "$WORK/data"
fi
if [ -n "${RESUME:-}" ]; then
  tar -C "$WORK" -xzf "$RESUME"
  echo "resumed: $(find "$WORK/results/validation" -name '*.json' | wc -l) validated runs from $RESUME"
fi
if [ -n "${AS_IS:-}" ]; then
  # the config at its own scales (config/gpu_box.yaml: 26-28), results and roots set
  python3 -c 'import sys, yaml
c = yaml.safe_load(open(sys.argv[1])); c.update(results="results", roots=int(sys.argv[3]))
open(sys.argv[2], "w").write(yaml.safe_dump(c, sort_keys=False))' \
    "${CONFIG:-config/gpu_box.yaml}" "$WORK/config.yaml" "$ROOTS"
else
  # the config at S1 and S2, every experiment rewritten or dropped consistently (box_config.py)
  # shellcheck disable=SC2086  # WEAK: a list of scales
  python3 bench/box_config.py "${CONFIG:-config/gpu_box.yaml}" "$WORK/config.yaml" "$S1" "$S2" \
    "$ROOTS" ${WEAK:+--weak $WEAK}
fi
smk=(python3 -m snakemake -s "$PWD/Snakefile" -d "$WORK" --configfile "$WORK/config.yaml")
start=$(date +%s)
status=0
cores=$(nproc)
if [ -n "${RESUME:-}" ]; then
  # A packed run carries no graph or partition directory (too large): made again here, they
  # would be newer than the restored runs, and snakemake would search those graphs again
  # (three calls of the full config each ran the lattice's runs again, ~100 s a call). So the
  # restored runs' graph directories are made first, then the targets' partitions (--until
  # partition; naming the graph rules there too stops snakemake part way, its issue 823),
  # then the restored runs and their verdicts are marked newer: the same config's runs,
  # validated.
  graphs=$(python3 - "$WORK" <<'PY'
import pathlib, sys, yaml
work = pathlib.Path(sys.argv[1])
graphs = yaml.safe_load((work / "config.yaml").read_text()).get("graphs") or {}
with_dir = {*(graphs.get("lattice") or {}), *(graphs.get("snap") or {}),
            *(name for name, spec in (graphs.get("kronecker") or {}).items()
              if not (spec or {}).get("in_place"))}
restored = {path.name for path in (work / "results/runs").glob("*") if path.is_dir()}
print(" ".join(f"results/graphs/{name}" for name in sorted(with_dir & restored)))
PY
)
  # of those, only the ones this call's plan makes again (its dry run lists them): snakemake
  # leaves a restored run whose graph directory is missing alone unless a run still to make
  # needs that graph, so a four-GPU call after the one-GPU sweeps skips their s21 and s23
  # graphs (most of the 160 s each one-GPU call spent here) and remakes the lattice, whose
  # 2- and 4-GPU runs remain
  # shellcheck disable=SC2086  # TARGETS, OMIT: lists of paths
  "${smk[@]}" -n ${TARGETS:-} ${OMIT:+--omit-from $OMIT} --resources gpu="$GPUS" \
    > "$OUT/workflow-plan.log" 2>&1 || { tail -20 "$OUT/workflow-plan.log"; exit 1; }
  graphs=$(comm -12 <(tr ' ' '\n' <<< "$graphs" | sort) \
    <(sed -n 's|^ *output: \(results/graphs/[^ ,]*\).*|\1|p' "$OUT/workflow-plan.log" | sort -u) \
    | xargs)
  # shellcheck disable=SC2086  # graphs, TARGETS: lists of paths
  { { [ -z "$graphs" ] || "${smk[@]}" -c "$cores" $graphs --resources gpu="$GPUS"; } \
    && "${smk[@]}" -c "$cores" ${TARGETS:-} --until partition --resources gpu="$GPUS"; } \
    > "$OUT/workflow-resume.log" 2>&1 || { tail -20 "$OUT/workflow-resume.log"; exit 1; }
  find "$WORK/results/runs" -exec touch {} +
  find "$WORK/results/validation" -exec touch {} +
fi
# TARGETS before --resources, which takes every word after it as a resource;
# --rerun-incomplete: a kept $WORK may hold a run an earlier call's time limit cut short;
# a validate job on every core: it starts only when no search holds a core (a search's job
# holds one a rank), so it never shares the host with a timed search, and a Kronecker run's
# validation holds the box's GPUs anyway (the three four-GPU calls' validations took 12-30 s
# a run on 8 threads, about as long as the runs)
# OMIT: runs (or rules) left out with what needs them (--omit-from), e.g. a serial CPU search
# longer than a call (seq-csr at scale 26, 16 roots: still running after 584 s), which would
# hold a core, and so every validate job back, till the call's limit
# shellcheck disable=SC2086  # TARGETS, OMIT: lists of paths
limit=0   # timeout's 0: none
if [ -n "${LIMIT:-}" ] && [ "$LIMIT" != 0 ]; then
  limit=$(( LIMIT - ($(date +%s) - stage_start) ))
  [ "$limit" -ge 1 ] || { echo "box: LIMIT=$LIMIT s spent before the run began" >&2; limit=1; }
fi
timeout --kill-after=30 "$limit" "${smk[@]}" -c "$cores" ${TARGETS:-} --rerun-incomplete \
  ${OMIT:+--omit-from $OMIT} \
  --set-threads validate="$cores" --resources gpu="$GPUS" > "$OUT/workflow.log" 2>&1 \
  || status=$?
echo "workflow: $(( $(date +%s) - start )) s, exit status $status" | tee -a "$OUT/workflow.log"
# every validated run, less its saved parents, and its verdict; a finished run without a verdict
# is left out (its validation needs the parents, too large to carry at scale 26: 8 GB for 16
# roots) and counted, so that a call whose validate jobs were held back says so (one whose
# serial CPU search held a core till its limit made 17 runs and packed none: OMIT, above)
python3 - "$WORK" "$OUT/results.tar.gz" <<'PY'
import sys, tarfile, pathlib
work = pathlib.Path(sys.argv[1])
verdicts = sorted((work / "results/validation").glob("*/*/*.json"))
finished = len(list((work / "results/runs").glob("*/*/*/run.json")))
with tarfile.open(sys.argv[2], "w:gz") as tar:
    for verdict in verdicts:
        rel = verdict.relative_to(work / "results/validation").with_suffix("")
        run = work / "results/runs" / rel
        if run.is_dir():
            tar.add(run, arcname=f"results/runs/{rel}",
                    filter=lambda t: None if "/parents" in t.name else t)
            tar.add(verdict, arcname=f"results/validation/{rel}.json")
print(f"packed {len(verdicts)} validated runs into {sys.argv[2]}; "
      f"{finished - len(verdicts)} finished runs without a verdict left out")
PY
cp "$WORK"/results/tables/*.md "$WORK"/results/figures/*.png "$OUT/" 2>/dev/null || true
cp "$WORK/config.yaml" "$OUT/"
python3 - "$WORK" > "$OUT/runs.txt" <<'PY'
import json, sys, pathlib
for rj in sorted(pathlib.Path(sys.argv[1], "results/runs").glob("*/*/*/run.json")):
    r = json.loads(rj.read_text())
    print(rj.parent.relative_to(sys.argv[1]), r["parameters"].get("comm"),
          r.get("validation", "cpu"), "valid" if r.get("valid", True) else "INVALID")
PY
# what a failed or cut call made is kept above (tables, figures, runs); the report needs all
[ "$status" = 0 ] || { tail -20 "$OUT/workflow.log"; exit "$status"; }
if [ -z "${TARGETS:-}" ]; then
  # the same OMIT: --report collects every table and figure of the whole plan, and one left
  # out with its runs would stop it ("marked for report but does not exist")
  "${smk[@]}" ${OMIT:+--omit-from $OMIT} --report "$WORK/results/report.html" \
    >> "$OUT/workflow.log" 2>&1
  cp "$WORK/results/report.html" "$OUT/"
fi
