# Morphological counting complexity (MCC) per language from three sources kept apart (published,
# Apertium, UniMorph), each counted by fairppl.morphology.mcc's rule, and forms per lemma; then
# one table (results/tables/mcc.csv) and the Apertium-vs-published validation.


include: "helpers/morphology.smk"


rule mcc_published:
    input:
        published=PUBLISHED_MCC,
        rule_check=MCC_RULE_CHECK,
    output:
        "results/morphology/mcc/published/{language}.json",
    log:
        "logs/mcc/published/{language}.log",
    wildcard_constraints:
        language=r"[a-z]{3}",
    localrule: True
    conda:
        "../../envs/morphology.yaml"
    script:
        "../scripts/mcc_published.py"


# lt-paradigm and the analysers come from Debian (Makefile: APT_PACKAGES), not from conda. A local
# rule (seconds per language): only the machine where Snakemake runs needs them, never a compute
# node; morphology.apertium_languages: [] leaves the source out (checked at start-up).
rule mcc_apertium:
    output:
        "results/morphology/mcc/apertium/{language}.json",
    log:
        "logs/mcc/apertium/{language}.log",
    benchmark:
        "benchmarks/mcc/apertium/{language}.tsv"
    wildcard_constraints:
        language=r"[a-z]{3}",
    localrule: True
    conda:
        "../../envs/morphology.yaml"
    threads: 1
    resources:
        # Minutes, with margin: lt-paradigm lists Polish's 970,000 forms in about 4 s.
        runtime=attempt_runtime(10),
        mem_mb=attempt_memory("mcc_apertium", 2000),
    params:
        apertium_dir=lookup(dpath="morphology/apertium_dir", within=config),
    script:
        "../scripts/mcc_apertium.py"


rule download_unimorph:
    output:
        "resources/downloads/unimorph/{language}.tsv",
    log:
        "logs/download_unimorph/{language}.log",
    wildcard_constraints:
        language=r"[a-z]{3}",
    retries: 2
    localrule: True
    conda:
        "../../envs/morphology.yaml"
    params:
        url=unimorph_url,
    script:
        "../scripts/download_unimorph.py"


rule mcc_unimorph:
    input:
        "resources/downloads/unimorph/{language}.tsv",
    output:
        "results/morphology/mcc/unimorph/{language}.json",
    log:
        "logs/mcc/unimorph/{language}.log",
    wildcard_constraints:
        language=r"[a-z]{3}",
    localrule: True
    conda:
        "../../envs/morphology.yaml"
    params:
        url=unimorph_url,
    script:
        "../scripts/mcc_unimorph.py"


rule mcc_table:
    input:
        records=mcc_records(),
    output:
        table="results/tables/mcc.csv",
        validation="results/tables/mcc_validation.csv",
    log:
        "logs/mcc_table.log",
    localrule: True
    conda:
        "../../envs/morphology.yaml"
    script:
        "../scripts/mcc_table.py"


# Each language's morphology measures beside every open-vocabulary model's BPEC on words, on the
# lemmatized copy (same units) and marginalised over tokenizations.
rule morphology_languages:
    input:
        units=f"results/corpus/{morphology_corpus()}/units.parquet",
        words=open_score_files(morphology_corpus()),
        lemmas=lemma_score_files(),
        marginal="results/tables/marginal.csv",
        mcc="results/tables/mcc.csv",
        forms_per_lemma="results/tables/forms_per_lemma.csv",
        coverage="results/tables/lemmatizer_coverage.csv",
    output:
        csv=report(
            "results/tables/morphology_languages.csv",
            caption="../report/morphology_languages.rst",
            category="Tables",
            labels={"table": "morphology measures and BPEC per language"},
        ),
    log:
        "logs/morphology_languages.log",
    localrule: True
    conda:
        "../../envs/morphology.yaml"
    params:
        corpus=morphology_corpus(),
    script:
        "../scripts/morphology_languages.py"


# Regressions of BPEC on each measure across languages, from the per-language table only.
rule morphology_regressions:
    input:
        languages="results/tables/morphology_languages.csv",
    output:
        csv=report(
            "results/tables/morphology.csv",
            caption="../report/morphology.rst",
            category="Tables",
            labels={"table": "BPEC against morphology, per model and source"},
        ),
        tex="results/tables/morphology.tex",
    log:
        "logs/morphology_regressions.log",
    localrule: True
    conda:
        "../../envs/morphology.yaml"
    params:
        permutation=permutation_settings(),
        # the sheet's language families: the family-controlled tests beside the plain one
        families=language_families(),
    script:
        "../scripts/morphology_regressions.py"


# The difficulty model of Mielke et al. 2019 on every unit each model scored, and its predictors,
# per corpus of morphology.corpus and morphology.difficulty_corpora.
rule difficulty_table:
    input:
        scores=difficulty_score_files(),
        models="results/tables/models.parquet",
        correlates="results/tables/correlates.csv",
        languages="results/tables/morphology_languages.csv",
        published=str(
            Path(workflow.basedir)
            / "resources"
            / "published"
            / "difficulty_mielke2019.tsv"
        ),
        # Mielke et al.'s 106 Bible translations and which of them are the study's text
        mielke_bible=str(PUBLISHED / "mielke2019_bible_translations.tsv"),
        mielke_matches=str(PUBLISHED / "mielke2019_bible_matches.tsv"),
    output:
        csv=report(
            "results/tables/difficulty.csv",
            caption="../report/difficulty.rst",
            category="Tables",
            labels={"table": "per-language difficulty (Mielke et al. 2019)"},
        ),
        tex="results/tables/difficulty.tex",
        agreement="results/tables/difficulty_agreement.csv",
        predictors="results/tables/difficulty_predictors.csv",
        mielke="results/tables/difficulty_mielke_bible.csv",
        mielke_rows="results/tables/difficulty_mielke_bible_rows.csv",
        # the spread between translations of one language beside that between languages
        translations="results/tables/difficulty_translations.csv",
        translation_rows="results/tables/difficulty_translations_rows.csv",
    log:
        "logs/difficulty_table.log",
    localrule: True
    conda:
        "../../envs/morphology.yaml"
    params:
        bootstrap=bootstrap_settings(),
        difficulty=difficulty_settings(),
        sheet=difficulty_sheet(),
        # the permutations and the sheet's language families of the family-controlled tests
        permutation=permutation_settings(),
        families=language_families(),
    script:
        "../scripts/difficulty_table.py"


# How unequal each model is across languages, and each tokenizer's premium over English.
rule fairness_table:
    input:
        scores=difficulty_score_files(),
        units=expand(
            "results/corpus/{corpus}/units.parquet", corpus=difficulty_corpora()
        ),
    output:
        csv=report(
            "results/tables/fairness.csv",
            caption="../report/fairness.rst",
            category="Tables",
            labels={"table": "hardest/easiest ratio and Gini of BPEC per model"},
        ),
        tex="results/tables/fairness.tex",
        premium="results/tables/tokenizer_premium.csv",
    log:
        "logs/fairness_table.log",
    localrule: True
    conda:
        "../../envs/morphology.yaml"
    params:
        bootstrap=bootstrap_settings(),
        reference={c: english_reference(c) for c in difficulty_corpora()},
        # a corpus keeping each language's own units: its languages with few units leave the
        # summary's common units, as they leave models.csv's (corpora.<id>.common_min_share)
        common_min_share=common_min_shares(),
    script:
        "../scripts/fairness_table.py"


rule plot_morphology:
    input:
        languages="results/tables/morphology_languages.csv",
    output:
        **{
            source: report(
                path,
                caption="../report/morphology_figure.rst",
                category="Figures",
                labels={"figure": f"BPEC against {source} MCC"},
            )
            for source, path in morphology_figures().items()
        },
    log:
        "logs/plot_morphology.log",
    localrule: True
    conda:
        "../../envs/report.yaml"
    params:
        languages=report_languages(),
    script:
        "../scripts/plot_morphology.py"
