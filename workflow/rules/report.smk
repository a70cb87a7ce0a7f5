# Aggregate: every validated run into tables (CSV + Markdown) and figures (PNG + SVG).
# `snakemake figures` redoes only the figures; add --forcerun figure to redraw them.
# Local rules: under a batch scheduler these read small run files and draw, on the node that
# runs snakemake, rather than wait in the queue for a compute node each.

localrules:
    table,
    figure,
    figures,
    tables,


rule table:
    input:
        runs=table_runs,
        validated=lambda wc: experiment_validations(*TABLES[wc.name][1]),
    output:
        csv=report(
            f"{RESULTS}/tables/{{name}}.csv",
            caption="../report/table.rst",
            category="Tables",
        ),
        md=f"{RESULTS}/tables/{{name}}.md",
    wildcard_constraints:
        name=names_regex(TABLES),
    params:
        kind=lambda wc: TABLES[wc.name][0],
        stem=lambda wc, output: output.csv[: -len(".csv")],
    log:
        f"{RESULTS}/logs/tables/{{name}}.log",
    conda:
        "../../envs/cpu.yaml"
    shell:
        "python3 -m bfs report table {params.kind} {input.runs} --out {params.stem} 2>&1 | tee {log}"


rule figure:
    input:
        runs=figure_runs,
        validated=lambda wc: experiment_validations(*FIGURES[wc.name][1]),
    output:
        png=report(
            f"{RESULTS}/figures/{{name}}.png",
            caption="../report/figure.rst",
            category="Figures",
        ),
        svg=f"{RESULTS}/figures/{{name}}.svg",
    wildcard_constraints:
        name=names_regex(FIGURES),
    params:
        kind=lambda wc: FIGURES[wc.name][0],
        stem=lambda wc, output: output.png[: -len(".png")],
    log:
        f"{RESULTS}/logs/figures/{{name}}.log",
    conda:
        "../../envs/cpu.yaml"
    shell:
        "python3 -m bfs report figure {params.kind} {input.runs} --out {params.stem} 2>&1 | tee {log}"


rule figures:
    input:
        all_figures(),


rule tables:
    input:
        all_tables(),
