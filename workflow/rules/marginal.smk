# The marginal likelihood over tokenizations (fairppl.marginal), part of the default study: every
# configured estimator on an
# evenly spaced subset of each language's evaluation units, per model, one resumable job each
# (finished runs are appended to a hidden partial file beside the output, which Snakemake does not
# delete when a job fails, so a rerun computes only what is missing); then one table.


include: "helpers/marginal.smk"


rule marginal_ngram:
    input:
        model=trained_on("results/ngram/{corpus}/{language}/{tokenizer}.o{order}.kenlm"),
        tokenizer=trained_on("results/tokenizers/{corpus}/{language}/{tokenizer}.model"),
        units="results/corpus/{corpus}/units.parquet",
    output:
        table="results/marginal/{corpus}/{language}/kenlm-subword-o{order}.{tokenizer}.parquet",
    log:
        "logs/marginal_ngram/{corpus}/{language}.{tokenizer}.o{order}.log",
    benchmark:
        "benchmarks/marginal_ngram/{corpus}/{language}.{tokenizer}.o{order}.tsv"
    conda:
        "../../envs/marginal.yaml"
    # One thread: KenLM queries and the lattice code are single-threaded.
    threads: 1
    resources:
        # Minutes, with margin: the six n-gram estimators on 50 German test verses took 8 s.
        runtime=attempt_runtime(30, config["marginal"]["max_units"], 50),
        mem_mb=attempt_memory("marginal_ngram", 2000),
    params:
        split=eval_split,
        max_units=lookup(dpath="marginal/max_units", within=config),
        estimators=lookup(dpath="marginal/ngram/estimators", within=config),
        sampling=marginal_sampling(),
        part="results/marginal/{corpus}/{language}/.kenlm-subword-o{order}.{tokenizer}.part.jsonl",
    script:
        "../scripts/marginal_units.py"


rule marginal_lengths:
    input:
        model=trained_on("results/ngram/{corpus}/{language}/{tokenizer}.o{order}.kenlm"),
        tokenizer=trained_on("results/tokenizers/{corpus}/{language}/{tokenizer}.model"),
        units="results/corpus/{corpus}/units.parquet",
    output:
        table="results/marginal/{corpus}/{language}/lengths.kenlm-subword-o{order}.{tokenizer}.parquet",
    log:
        "logs/marginal_lengths/{corpus}/{language}.{tokenizer}.o{order}.log",
    benchmark:
        "benchmarks/marginal_lengths/{corpus}/{language}.{tokenizer}.o{order}.tsv"
    conda:
        "../../envs/marginal.yaml"
    threads: 1
    resources:
        # Minutes, with margin: 4 estimators x 6 prefix lengths on 10 units took 13-24 s.
        runtime=attempt_runtime(30, config["marginal"]["lengths"]["max_units"], 10),
        mem_mb=attempt_memory("marginal_lengths", 2000),
    params:
        split=eval_split,
        max_units=lookup(dpath="marginal/lengths/max_units", within=config),
        word_counts=lookup(dpath="marginal/lengths/word_counts", within=config),
        sampling=marginal_sampling(),
    script:
        "../scripts/marginal_lengths.py"


rule marginal_caching:
    input:
        model=trained_on("results/neural/{corpus}/{language}/{tokenizer}/model"),
        tokenizer=trained_on("results/tokenizers/{corpus}/{language}/{tokenizer}.model"),
        units="results/corpus/{corpus}/units.parquet",
    output:
        csv="results/marginal/{corpus}/{language}/caching.transformer.{tokenizer}.csv",
    log:
        "logs/marginal_caching/{corpus}/{language}.{tokenizer}.log",
    benchmark:
        "benchmarks/marginal_caching/{corpus}/{language}.{tokenizer}.tsv"
    wildcard_constraints:
        tokenizer=r"spm-unigram-\d+",
    priority: 40
    conda:
        "../../envs/marginal.yaml"
    threads: 1
    resources:
        # Minutes, with margin: 20 documents of 4 verses, K=32, took about 40 s per language.
        runtime=attempt_runtime(30, config["marginal"]["caching"]["n_documents"], 20),
        mem_mb=attempt_memory("marginal_caching", 4000),
        gpu=GPUS,
    params:
        split=eval_split,
        n_documents=lookup(dpath="marginal/caching/n_documents", within=config),
        verses=lookup(dpath="marginal/caching/verses", within=config),
        fill=lookup(dpath="marginal/caching/fill", within=config),
        K=lookup(dpath="marginal/K", within=config),
        tau=marginal_first_tau(),
        seed=lookup(dpath="marginal/seed", within=config),
    script:
        "../scripts/marginal_caching.py"


rule marginal_samples_needed:
    input:
        model=trained_on("results/ngram/{corpus}/{language}/{tokenizer}.o{order}.kenlm"),
        tokenizer=trained_on("results/tokenizers/{corpus}/{language}/{tokenizer}.model"),
        units="results/corpus/{corpus}/units.parquet",
    output:
        curves="results/marginal_analyses/{corpus}/{language}/samples_needed.kenlm-subword-o{order}.{tokenizer}.csv",
        summary="results/marginal_analyses/{corpus}/{language}/samples_needed_summary.kenlm-subword-o{order}.{tokenizer}.csv",
    log:
        "logs/marginal_samples_needed/{corpus}/{language}.{tokenizer}.o{order}.log",
    benchmark:
        "benchmarks/marginal_samples_needed/{corpus}/{language}.{tokenizer}.o{order}.tsv"
    conda:
        "../../envs/marginal.yaml"
    threads: 1
    resources:
        # Minutes, with margin: 50 verses took 3-8 s per language.
        runtime=attempt_runtime(30, config["marginal"]["max_units"], 50),
        mem_mb=attempt_memory("marginal_samples_needed", 2000),
    params:
        split=eval_split,
        max_units=lookup(dpath="marginal/max_units", within=config),
        sampling=marginal_sampling(),
        tau=marginal_first_tau(),
    script:
        "../scripts/marginal_analyses.py"


rule marginal_analyses_tables:
    input:
        summary=samples_needed_files(),
        blocks=qdefault_block_files(),
    output:
        summary="results/tables/marginal_samples_needed.csv",
        bins="results/tables/marginal_qdefault_bins.csv",
    log:
        "logs/marginal_analyses_tables.log",
    localrule: True
    conda:
        "../../envs/marginal.yaml"
    script:
        "../scripts/marginal_analyses.py"


rule marginal_lm:
    input:
        unpack(marginal_lm_inputs),
    output:
        table="results/marginal/{corpus}/{language}/{model}.{tokenizer}.parquet",
        # Q(default) per block of its lm-guided runs (Chirkova et al. Table 2)
        blocks="results/marginal/{corpus}/{language}/{model}.{tokenizer}.blocks.parquet",
    log:
        "logs/marginal_lm/{corpus}/{language}.{model}.{tokenizer}.log",
    benchmark:
        "benchmarks/marginal_lm/{corpus}/{language}.{model}.{tokenizer}.tsv"
    wildcard_constraints:
        model=marginal_lm_constraint(),
        tokenizer=r"native|spm-unigram-\d+",
    priority: 50
    conda:
        "../../envs/marginal.yaml"
    # One thread: as for score_pretrained, two jobs side by side on 2 cores beat one on two.
    threads: 1
    resources:
        # Minutes, with margin: at K=32, M=16 on one CPU thread the LM-guided estimator takes
        # about 3 s per verse for SmolLM2-135M and 11 s for Gemma-3-270M (~23 s in Hindi), so
        # 20 units (pretrained_max_units) take 1-8 min per job on a quiet core.
        runtime=attempt_runtime(120, marginal_lm_max_units, 20),
        gpu=GPUS,
        mem_mb=attempt_memory("marginal_lm", 8000),
    params:
        split=eval_split,
        max_units=marginal_lm_max_units,
        estimators=marginal_lm_estimators,
        sampling=marginal_sampling(),
        load_from=marginal_lm_load_from,
        special=marginal_lm_special,
        dtype=pretrained_dtype,
        part="results/marginal/{corpus}/{language}/.{model}.{tokenizer}.part.jsonl",
    script:
        "../scripts/marginal_units.py"


rule marginal_table:
    input:
        units=marginal_unit_tables(),
        tables=marginal_files(),
        published=PUBLISHED_MARGINAL,
        lengths=marginal_length_files(),
        caching=marginal_caching_files(),
    output:
        parquet="results/tables/marginal.parquet",
        csv="results/tables/marginal.csv",
        per_unit="results/tables/marginal_units.parquet",
        fair="results/tables/marginal_fair_bits.csv",
        rankings="results/tables/marginal_rankings.csv",
        accuracy="results/tables/marginal_accuracy.csv",
        entropy="results/tables/marginal_entropy_gap.csv",
        published="results/tables/marginal_published.csv",
        lengths="results/tables/marginal_lengths.csv",
        caching="results/tables/marginal_caching.csv",
    log:
        "logs/marginal_table.log",
    localrule: True
    conda:
        "../../envs/report.yaml"
    params:
        bootstrap=bootstrap_settings(),
        min_units=config["marginal"]["min_units"],
    script:
        "../scripts/marginal_table.py"


rule plot_marginal:
    input:
        per_unit="results/tables/marginal_units.parquet",
        curves=samples_needed_files("curves"),
    output:
        entropy="results/figures/marginal_entropy_gap.png",
        intervals="results/figures/marginal_intervals.png",
        panels="results/tables/marginal_interval_panels.csv",
        needed="results/figures/marginal_samples_needed.png",
    log:
        "logs/plot_marginal.log",
    localrule: True
    conda:
        "../../envs/report.yaml"
    params:
        min_units=config["marginal"]["min_units"],
    script:
        "../scripts/plot_marginal.py"
