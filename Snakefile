# fairppl: how hard is each language to language-model, measured fairly.
# This file is the table of contents; the stages live in workflow/rules/.
from snakemake.utils import min_version

min_version("9.0")


# Checks the YAML syntax of config/config.yaml first, so that an error names its file and line.
include: "workflow/rules/config_syntax.smk"


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/setup.smk"
include: "workflow/rules/corpus.smk"
include: "workflow/rules/tokenizers.smk"
include: "workflow/rules/ngram.smk"
include: "workflow/rules/neural.smk"
include: "workflow/rules/pretrained.smk"
include: "workflow/rules/flores.smk"
include: "workflow/rules/metrics.smk"
include: "workflow/rules/marginal.smk"
include: "workflow/rules/lemmas.smk"
include: "workflow/rules/morphology.smk"
include: "workflow/rules/shannon.smk"


rule all:
    default_target: True
    input:
        study_outputs(),
        # corrupt or deleted intermediates found at start-up (workflow/rules/common.smk)
        integrity_rebuild,


# The marginal-likelihood stage alone (`snakemake marginal`); `all` includes it through the report.
rule marginal:
    input:
        "results/tables/marginal.parquet",
        "results/tables/marginal.csv",


# Why languages differ (`snakemake morphology`): MCC by source, the lemmatized control, the
# regressions, the difficulty model and the fairness summary; `all` includes it through the report.
rule morphology:
    input:
        "results/tables/mcc.csv",
        "results/tables/morphology_languages.csv",
        "results/tables/morphology.csv",
        "results/tables/difficulty.csv",
        "results/tables/fairness.csv",
        list(morphology_figures().values()),


# The Shannon game (`snakemake shannon`): bets of every bettor, the table of every protocol and
# the figure; `all` includes it through the report.
rule shannon:
    input:
        list(shannon_outputs().values()),
