# Aggregate: every validated run into tables (CSV + Markdown) and figures (PNG + SVG), a
# report category per experiment (TABLES, FIGURES: each experiment's by its kind, and the
# pooled ones), the config's paired comparisons (bfs compare: per-root speedups of one run over
# another, category "Comparisons"), and the landing page's facts (what ran, on what, headline
# numbers). `snakemake figures` redoes only the figures; add --forcerun figure to redraw them.
# Local rules: under a batch scheduler these read small run files and draw, on the node that
# runs snakemake, rather than wait in the queue for a compute node each.

localrules:
    table,
    figure,
    compare,
    figures,
    tables,
    landing,


rule table:
    input:
        runs=table_runs,
        validated=lambda wc: experiment_validations(*TABLES[wc.name][1]),
    output:
        csv=report(
            f"{RESULTS}/tables/{{name}}.csv",
            caption="../report/table.rst",
            category=report_category(TABLES),
            subcategory="Tables",
        ),
        md=f"{RESULTS}/tables/{{name}}.md",
    wildcard_constraints:
        name=names_regex(TABLES),
    params:
        kind=lambda wc: TABLES[wc.name][0],
        base=lambda wc: TABLES[wc.name][2],   # the caption's (table.rst)
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
            category=report_category(FIGURES),
            subcategory="Figures",
        ),
        svg=f"{RESULTS}/figures/{{name}}.svg",
    wildcard_constraints:
        name=names_regex(FIGURES),
    params:
        kind=lambda wc: FIGURES[wc.name][0],
        base=lambda wc: FIGURES[wc.name][2],   # the caption's (figure.rst)
        stem=lambda wc, output: output.png[: -len(".png")],
    log:
        f"{RESULTS}/logs/figures/{{name}}.log",
    conda:
        "../../envs/cpu.yaml"
    shell:
        "python3 -m bfs report figure {params.kind} {input.runs} --out {params.stem} 2>&1 | tee {log}"


rule compare:
    input:
        runs=comparison_runs,
        validated=comparison_validations,
    output:
        summary=report(
            f"{RESULTS}/comparisons/{{name}}/summary.csv",
            caption="../report/comparison.rst",
            category="Comparisons",
            subcategory=lambda wc: wc.name,
        ),
        summary_md=f"{RESULTS}/comparisons/{{name}}/summary.md",
        per_root=report(
            f"{RESULTS}/comparisons/{{name}}/per_root.csv",
            caption="../report/comparison.rst",
            category="Comparisons",
            subcategory=lambda wc: wc.name,
        ),
        per_root_md=f"{RESULTS}/comparisons/{{name}}/per_root.md",
        png=report(
            f"{RESULTS}/comparisons/{{name}}/speedups.png",
            caption="../report/comparison.rst",
            category="Comparisons",
            subcategory=lambda wc: wc.name,
        ),
        svg=f"{RESULTS}/comparisons/{{name}}/speedups.svg",
    wildcard_constraints:
        name=names_regex(COMPARISONS),
    params:
        out=lambda wc: comparison_dir(wc.name),
        a=lambda wc: COMPARISONS[wc.name]["a"],   # the caption's (comparison.rst)
        b=lambda wc: COMPARISONS[wc.name]["b"],
    log:
        f"{RESULTS}/logs/comparisons/{{name}}.log",
    conda:
        "../../envs/cpu.yaml"
    shell:
        # the directory snakemake made for the outputs is replaced whole (--force)
        "python3 -m bfs compare {input.runs} --out {params.out} --force 2>&1 | tee {log}"


rule figures:
    input:
        all_figures(),


rule tables:
    input:
        all_tables(),


rule landing:
    input:
        unpack(landing_inputs),
    output:
        LANDING,
    log:
        f"{RESULTS}/logs/landing.log",
    run:
        from bfs.report.landing import write_landing

        omitted = omitted_runs()
        write_landing(output[0], config, {
            name: [(g, r, run_dir(g, r)) for g, r in experiment_runs(name)
                   if (g, r) not in omitted]
            for name in EXPERIMENTS
        }, left_out=[run_dir(*run) for run in omitted])

