#!/usr/bin/env bash
# The GPU-box workflow (config/gpu_box.yaml) end to end on a multi-GPU machine at two chosen
# scales (strong scaling at both, weak scaling S1 on 1 GPU -> S2 on 2), snakemake importable:
#   OUT=dir S1=23 S2=24 ROOTS=32 [CONFIG=config/gpu_box_small.yaml] bash bench/gpu_box_workflow.sh
# Tables, figures, the report and a list of runs (with their validation) go to $OUT.
set -euo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
OUT=${OUT:-gpu-box-out} S1=${S1:-26} S2=${S2:-27} ROOTS=${ROOTS:-64}
WORK=${WORK:-/tmp/bfs-gpu-box}
GPUS=$(nvidia-smi -L | wc -l)
mkdir -p "$OUT"
rm -rf "$WORK" && mkdir -p "$WORK" && ln -s "$PWD/data" "$WORK/data"
# the config at S1 and S2, every experiment rewritten or dropped consistently (bench/box_config.py)
python3 bench/box_config.py "${CONFIG:-config/gpu_box.yaml}" "$WORK/config.yaml" "$S1" "$S2" "$ROOTS"
smk() { python3 -m snakemake -s "$PWD/Snakefile" -d "$WORK" --configfile "$WORK/config.yaml" "$@"; }
start=$(date +%s)
smk -c 16 --resources gpu="$GPUS" > "$OUT/workflow.log" 2>&1
echo "workflow: $(( $(date +%s) - start )) s" | tee -a "$OUT/workflow.log"
smk --report "$WORK/results/report.html" >> "$OUT/workflow.log" 2>&1
cp "$WORK"/results/tables/*.md "$WORK"/results/figures/*.png "$OUT/" 2>/dev/null || true
cp "$WORK/results/report.html" "$WORK/config.yaml" "$OUT/"
python3 - "$WORK" > "$OUT/runs.txt" <<'PY'
import json, sys, pathlib
for rj in sorted(pathlib.Path(sys.argv[1], "results/runs").glob("*/*/*/run.json")):
    r = json.loads(rj.read_text())
    print(rj.parent.relative_to(sys.argv[1]), r["parameters"].get("comm"),
          r.get("validation", "cpu"), "valid" if r.get("valid", True) else "INVALID")
PY
