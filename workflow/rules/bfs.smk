# BFS runs: one validated run directory per (graph, algorithm, backend, layout, variant).
# Multi-rank runs start through `resources.mpi` so a profile can swap the launcher
# (--set-resources bfs_mpi:mpi="srun --mpi=pmi2"); `tasks` is the rank count.


rule bfs_serial:
    input:
        f"{RESULTS}/graphs/{{graph}}",
    output:
        directory(f"{RESULTS}/runs/{{graph}}/{{algorithm}}/{{backend}}-serial-default"),
    params:
        roots=config["roots"],
        save=config["save_parents"],
    resources:
        tasks=1,
        gpu=gpus,
    log:
        f"{RESULTS}/logs/bfs/{{graph}}/{{algorithm}}-{{backend}}-serial-default.log",
    conda:
        "../../envs/cpu.yaml"
    shell:
        "python3 -m bfs run {input} --algorithm {wildcards.algorithm} --backend {wildcards.backend}"
        " --roots {params.roots} --save-parents {params.save} --out {output}"
        " 2>&1 >>{log} | tee -a {log}"


rule bfs_mpi:
    input:
        f"{RESULTS}/partitions/{{graph}}/{{layout}}",
    output:
        directory(f"{RESULTS}/runs/{{graph}}/{{algorithm}}/{{backend}}-{{layout}}-{{variant}}"),
    wildcard_constraints:
        layout="[0-9]+x[0-9]+|p[0-9]+",
    params:
        roots=config["roots"],
        save=config["save_parents"],
        options=run_options,
    threads: lambda wc: layout_ranks(wc.layout)
    resources:
        tasks=lambda wc: layout_ranks(wc.layout),
        mpi=config["mpi"],
        gpu=gpus,
    log:
        f"{RESULTS}/logs/bfs/{{graph}}/{{algorithm}}-{{backend}}-{{layout}}-{{variant}}.log",
    conda:
        "../../envs/cpu.yaml"
    shell:
        "{resources.mpi} -n {resources.tasks} python3 -m bfs run {input}"
        " --algorithm {wildcards.algorithm} --backend {wildcards.backend} {params.options}"
        " --roots {params.roots} --save-parents {params.save} --out {output}"
        " 2>&1 >>{log} | tee -a {log}"
