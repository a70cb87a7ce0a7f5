# Partition: per (graph, layout) the block files the distributed runs read, one per rank.
# With `cache` in the config, taken from / stored in the shared cache like the graphs.


rule partition:
    input:
        f"{RESULTS}/graphs/{{graph}}",
    output:
        directory(f"{RESULTS}/partitions/{{graph}}/{{layout}}"),
    wildcard_constraints:
        layout="[0-9]+x[0-9]+|p[0-9]+",
    params:
        shape=partition_args,
        cache=CACHE_ARG,
    resources:
        mem_mb=lambda wc: mem_mb_for(wc.graph, per_edge=64),
        runtime=lambda wc, attempt: runtime_for(wc.graph, 4, attempt),
    log:
        f"{RESULTS}/logs/partition/{{graph}}-{{layout}}.log",
    conda:
        "../../envs/cpu.yaml"
    shell:
        "python3 -m bfs partition {input} {params.shape} {params.cache} --out {output}"
        " 2>&1 | tee {log}"
