# BFS runs: one validated run directory per (graph, algorithm, backend, layout, variant).
# A run reads its graph directory (serial) or partition directory, or for an in-place graph
# generates it (run_source: `bfs run --generate kronecker:...`, no input files).
# A run id's variant names the settings an experiment chose (bfs.algorithms.options: 2d's
# exchange, a swept 1d threshold sf1000, a comm that is not the backend's default, hybrid's
# t{T}-l{lambda} or fixed-t{T}-s{share}), `default` where none; run_flags reads the `bfs run`
# flags back from it.
# Multi-rank runs start through `resources.mpi` so a profile can swap the launcher
# (--set-resources bfs_mpi:mpi="srun --mpi=pmi2"), told the rank count (and with srun across
# nodes the placement: launcher_args).
# A distributed algorithm on one rank (layouts 1x1, p1) runs without a launcher (MPI singleton),
# so batch schedulers see a plain one-task job (bfs_single_rank).
# Every BFS job asks for one GPU per rank when it needs GPUs; each rank then picks its own
# device (SLURM_LOCALID / node-local rank) and run.json records which. The job's shape (tasks,
# nodes, GPUs; bfs_resources, bfs/harness/jobsize.py) follows cluster.gpus_per_node /
# cpu_ranks_per_node when the config gives them, memory is per node and runtime grows on retry.
# On one box (`exclusive_gpus: N`, or `gpus: N` with GPU runs of several ranks) a GPU job asks
# for all N, so `--resources gpu=N` runs one at a time; on a shared box (`share_gpus: true`)
# it asks for its ranks' GPUs and starts through the slot launcher (params.slots:
# workflow/gpu_slots.py), which takes that many free GPUs and shows the job only those.
# GPU runs get `--comm` from the run id's variant (run_flags).
# A job holds one core a rank, a hybrid run HYBRID_THREADS (run_threads), and its command tells
# Numba so (NUMBA_NUM_THREADS: a rank's pool would be the machine's, on the cores of a timed
# search that snakemake runs beside it, and in-place generation is a Numba loop).
# The conda environment follows the backend (bfs_env): envs/gpu.yaml (CuPy) for gpu and auto
# runs, envs/cpu.yaml for cpu runs.


ruleorder: bfs_single_rank > bfs_mpi


rule bfs_serial:
    input:
        run_input,
    output:
        directory(f"{RESULTS}/runs/{{graph}}/{{algorithm}}/{{backend}}-serial-{{variant}}"),
    # `default`, or the setting a sweep chose (hybrid's t16-l1000): serial_flags writes it
    params:
        source=run_source,
        roots=config["roots"],
        save=config["save_parents"],
        options=serial_flags,
        slots=gpu_slots,
    threads: lambda wc: run_threads(wc.algorithm)
    resources:
        **bfs_resources(),
    log:
        f"{RESULTS}/logs/bfs/{{graph}}/{{algorithm}}-{{backend}}-serial-{{variant}}.log",
    conda:
        bfs_env
    shell:
        "NUMBA_NUM_THREADS={threads} {params.slots}python3 -m bfs run {params.source} --algorithm {wildcards.algorithm} --backend {wildcards.backend}"
        "{params.options} --roots {params.roots} --save-parents {params.save} --out {output}"
        " 2>&1 >>{log} | tee -a {log}"


rule bfs_single_rank:
    input:
        run_input,
    output:
        directory(f"{RESULTS}/runs/{{graph}}/{{algorithm}}/{{backend}}-{{layout}}-{{variant}}"),
    wildcard_constraints:
        layout="1x1|p1",
    params:
        source=run_source,
        roots=config["roots"],
        save=config["save_parents"],
        options=run_flags,
        slots=gpu_slots,
    threads: lambda wc: run_threads(wc.algorithm)
    resources:
        **bfs_resources(),
    log:
        f"{RESULTS}/logs/bfs/{{graph}}/{{algorithm}}-{{backend}}-{{layout}}-{{variant}}.log",
    conda:
        bfs_env
    shell:
        "NUMBA_NUM_THREADS={threads} {params.slots}python3 -m bfs run {params.source}"
        " --algorithm {wildcards.algorithm} --backend {wildcards.backend} {params.options}"
        " --roots {params.roots} --save-parents {params.save} --out {output}"
        " 2>&1 >>{log} | tee -a {log}"


rule bfs_mpi:
    input:
        run_input,
    output:
        directory(f"{RESULTS}/runs/{{graph}}/{{algorithm}}/{{backend}}-{{layout}}-{{variant}}"),
    wildcard_constraints:
        layout="[0-9]+x[0-9]+|p[0-9]+",
    params:
        source=run_source,
        roots=config["roots"],
        save=config["save_parents"],
        options=run_flags,
        launch=launcher_args,
        slots=gpu_slots,
    # locally the ranks occupy as many cores; under SLURM each rank is one task
    threads: lambda wc: layout_ranks(wc.layout)
    resources:
        **bfs_resources(mpi=config["mpi"]),
    log:
        f"{RESULTS}/logs/bfs/{{graph}}/{{algorithm}}-{{backend}}-{{layout}}-{{variant}}.log",
    conda:
        bfs_env
    shell:
        "NUMBA_NUM_THREADS=1 {params.slots}{resources.mpi} {params.launch} python3 -m bfs run"
        " {params.source}"
        " --algorithm {wildcards.algorithm} --backend {wildcards.backend} {params.options}"
        " --roots {params.roots} --save-parents {params.save} --out {output}"
        " 2>&1 >>{log} | tee -a {log}"
