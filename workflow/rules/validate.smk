# Validate: every run's saved parents re-checked against the graph's own edge list, in a job
# of its own; tables and figures take only runs that passed. A GPU run's in-place graph is
# generated again on the GPU, by a job that asks for it (validation_gpus). A run's validation
# goes before the next run (priority): a workflow stopped part way (a device call's limit, a
# SLURM allocation's end) leaves every finished run validated but the last, and a run's saved
# parents are checked while the next run has not yet filled the disk. The check of every edge
# runs where the edges are: on the GPU for a graph generated there again (bfs.validate.gpu),
# else on Numba threads, one a core the job holds (VALIDATE_THREADS: under SLURM its
# --cpus-per-task, locally at most --cores; `--set-threads validate=N` changes it).


rule validate:
    input:
        run=f"{RESULTS}/runs/{{graph}}/{{algorithm}}/{{backend}}-{{layout}}-{{variant}}",
        graph=lambda wc: [] if wc.graph in IN_PLACE else f"{RESULTS}/graphs/{wc.graph}",
    output:
        f"{RESULTS}/validation/{{graph}}/{{algorithm}}/{{backend}}-{{layout}}-{{variant}}.json",
    params:
        # an in-place graph has no directory (no input): bfs validate makes it again from run.json
        graph=lambda wc, input: f"--graph {input.graph}" if input.graph else "",
        # on a shared box (share_gpus) a validation on the GPU takes a slot of its own
        slots=validation_slots,
    resources:
        gpu=validation_gpus,
        mem_mb=lambda wc: mem_mb_for(wc.graph),
        runtime=lambda wc, attempt: runtime_for(wc.graph, 2 * config['save_parents'] + 2, attempt),
    threads: VALIDATE_THREADS
    priority: 1
    log:
        f"{RESULTS}/logs/validate/{{graph}}/{{algorithm}}-{{backend}}-{{layout}}-{{variant}}.log",
    conda:
        validation_env
    shell:
        # Numba's pool is as wide as the machine unless told (it reads NUMBA_NUM_THREADS, not
        # the OMP_NUM_THREADS snakemake sets): the job's own cores
        "NUMBA_NUM_THREADS={threads} {params.slots}python3 -m bfs validate {input.run}"
        " {params.graph} --report {output} 2>&1 | tee {log}"
