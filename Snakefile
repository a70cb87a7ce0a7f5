# One config -> graphs -> partitions -> validated BFS runs -> tables, figures, report.
#   snakemake -c 2                                  the experiments in config.yaml
#   snakemake -c 2 --configfile config/fu2014.yaml  the paper-size experiments
#   snakemake --report results/report.html          figures and tables with captions
# Stages live in workflow/rules/*.smk; shared helpers in workflow/rules/common.smk.
from snakemake.utils import min_version

min_version("8.0")

# config.yaml is the default; a --configfile replaces it rather than merging into it, so a
# paper config never inherits the default's experiments (--config KEY=VALUE still overrides).
if not workflow.overwrite_configfiles:

    configfile: "config.yaml"


# the report's landing page: what was run, on what, the headline numbers (rule landing)
report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/graphs.smk"
include: "workflow/rules/partition.smk"
include: "workflow/rules/bfs.smk"
include: "workflow/rules/validate.smk"
include: "workflow/rules/report.smk"


# the target rule does nothing: no batch job for it
localrules:
    all,


rule all:
    input:
        validations=all_validations(),
        tables=all_tables(),
        figures=all_figures(),
        comparisons=all_comparisons(),
        landing=LANDING,
    default_target: True
