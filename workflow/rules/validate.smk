# Validate: every run's saved parents re-checked against the graph's own edge list, in a job
# of its own; tables and figures take only runs that passed.


rule validate:
    input:
        run=f"{RESULTS}/runs/{{graph}}/{{algorithm}}/{{backend}}-{{layout}}-{{variant}}",
        graph=f"{RESULTS}/graphs/{{graph}}",
    output:
        f"{RESULTS}/validation/{{graph}}/{{algorithm}}/{{backend}}-{{layout}}-{{variant}}.json",
    resources:
        mem_mb=lambda wc: mem_mb_for(wc.graph),
        runtime=lambda wc, attempt: runtime_for(wc.graph, 2 * config['save_parents'] + 2, attempt),
    log:
        f"{RESULTS}/logs/validate/{{graph}}/{{algorithm}}-{{backend}}-{{layout}}-{{variant}}.log",
    conda:
        "../../envs/cpu.yaml"
    shell:
        "python3 -m bfs validate {input.run} --graph {input.graph} --report {output} 2>&1 | tee {log}"
