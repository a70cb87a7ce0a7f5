# Graphs: Graph500 Kronecker graphs, R x C lattices (road-like) and SNAP edge lists, each into
# a graph directory.
# With `cache` in the config a Kronecker graph is taken from the shared cache when there (every
# sha256 verified first; a damaged entry fails the job) and stored there when generated.


rule kronecker:
    output:
        directory(f"{RESULTS}/graphs/{{graph}}"),
    wildcard_constraints:
        graph=names_regex(set(KRONECKER) - IN_PLACE),
    params:
        args=kronecker_args,
        cache=CACHE_ARG,
    resources:
        mem_mb=lambda wc: mem_mb_for(wc.graph, per_edge=48),
        runtime=lambda wc, attempt: runtime_for(wc.graph, 4, attempt),
    log:
        f"{RESULTS}/logs/graphs/{{graph}}.log",
    conda:
        "../../envs/cpu.yaml"
    shell:
        "python3 -m bfs generate kronecker {params.args} {params.cache} --name {wildcards.graph}"
        " --out {output} 2>&1 | tee {log}"


rule lattice:
    output:
        directory(f"{RESULTS}/graphs/{{graph}}"),
    wildcard_constraints:
        graph=names_regex(LATTICE),
    params:
        args=lattice_args,
    resources:
        mem_mb=lambda wc: mem_mb_for(wc.graph, per_edge=48),
        runtime=lambda wc, attempt: runtime_for(wc.graph, 4, attempt),
    log:
        f"{RESULTS}/logs/graphs/{{graph}}.log",
    conda:
        "../../envs/cpu.yaml"
    shell:
        "python3 -m bfs generate lattice {params.args} --name {wildcards.graph} --out {output}"
        " 2>&1 | tee {log}"


# a download needs the internet, which compute nodes often lack, and no compute: it runs
# where snakemake runs (the login node) under a batch scheduler
localrules:
    snap_download,


rule snap_download:
    output:
        f"{RESULTS}/downloads/{{graph}}.txt",
    wildcard_constraints:
        graph=names_regex(g for g, d in SNAP.items() if "url" in d),
    params:
        url=lambda wc: SNAP[wc.graph]["url"],
        sha256=lambda wc: SNAP[wc.graph]["sha256"],
    log:
        f"{RESULTS}/logs/downloads/{{graph}}.log",
    conda:
        "../../envs/cpu.yaml"
    shell:
        "python3 -m bfs fetch {params.url:q} --sha256 {params.sha256} --out {output} 2>&1 | tee {log}"


rule snap_convert:
    input:
        snap_input,
    output:
        directory(f"{RESULTS}/graphs/{{graph}}"),
    wildcard_constraints:
        graph=names_regex(SNAP),
    params:
        sha256=lambda wc: SNAP[wc.graph]["sha256"],
    resources:
        mem_mb=lambda wc: mem_mb_for(wc.graph, per_edge=48),
        runtime=lambda wc, attempt: runtime_for(wc.graph, 4, attempt),
    log:
        f"{RESULTS}/logs/graphs/{{graph}}.log",
    conda:
        "../../envs/cpu.yaml"
    shell:
        # a local file is held to its configured digest too, before it is converted
        "(echo '{params.sha256}  {input}' | sha256sum --check --strict"
        " && python3 -m bfs generate snap {input} --name {wildcards.graph} --out {output}) 2>&1"
        " | tee {log}"
