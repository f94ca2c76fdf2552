# FLORES-200 at full breadth (config `flores`, on in config/wide/): every code's characters, UTF-8
# bytes and tokens under every tokenizer of the study, relative to English, beside Petrov et al.
# (2023)'s published counts; the byte premium beside Arnett et al. (2024); the pretrained LMs'
# bits on an evenly spaced sample of every code's sentences (the same sentences in every code),
# relative to English with intervals (canonical; on a slice of codes, flores.marginal, also the
# LM-guided marginal over all tokenizations), and their second-half bits beside Goldfish (Chang
# et al. 2024) by rank. docs/wide.md.


include: "helpers/flores.smk"


rule flores_parity:
    input:
        archive=lambda wc: flores_archive(),
        models=lambda wc: list(flores_model_folders().values()),
        spm=lambda wc: flores_spm_models(),
        petrov_counts=str(PUBLISHED / "petrov2023_token_counts.csv"),
        petrov_map=str(PUBLISHED / "petrov2023_flores_language_map.csv"),
        arnett=str(PUBLISHED / "byte_premium_arnett2024_flores.tsv"),
    output:
        parity="results/flores/parity.csv",
        petrov="results/tables/flores_petrov.csv",
        byte_premium="results/tables/flores_byte_premium.csv",
    log:
        "logs/flores_parity.log",
    benchmark:
        "benchmarks/flores_parity.tsv"
    conda:
        "../../envs/torch.yaml"
    threads: 2
    resources:
        # minutes and MB: all 204 codes under four tokenizers took about 2 minutes on 2 cores
        runtime=attempt_runtime(30),
        mem_mb=attempt_memory("flores_parity", 6000),
    params:
        settings=lambda wc: flores_settings(),
        folders=lambda wc: flores_model_folders(),
        languages=config["languages"],  # the sheet: each SentencePiece language's FLORES code
        spm_dirs=lambda wc: flores_spm_dirs(),
    script:
        "../scripts/flores_parity.py"


rule flores_bits:
    input:
        archive=lambda wc: flores_archive(),
        model=flores_model_folder,
    output:
        sentences="results/flores/bits/{model}.parquet",
    log:
        "logs/flores_bits/{model}.log",
    benchmark:
        "benchmarks/flores_bits/{model}.tsv"
    wildcard_constraints:
        model=flores_model_pattern(),
    priority: 50
    conda:
        "../../envs/torch.yaml"
    # one thread each: the two LMs score side by side on 2 cores (as score_pretrained)
    threads: 1
    resources:
        # minutes at 4 sentences a code: each LM took about 0.75 s of one CPU thread a sentence
        # (204 codes x 4 sentences: 14 minutes, the two side by side on 2 loaded cores)
        runtime=attempt_runtime(15, lambda wc: config["flores"]["sentences"] or 2009, 4),
        gpu=GPUS,
        mem_mb=attempt_memory("flores_bits", 8000),
    params:
        settings=lambda wc: flores_bits_settings(),
        dtype=config.get("pretrained", {}).get("dtype", "float32"),
        batch_size=config["scoring"]["batch_size"],
    script:
        "../scripts/flores_bits.py"


rule flores_marginal:
    input:
        archive=lambda wc: flores_archive(),
        model=flores_model_folder,
    output:
        table="results/flores/marginal/{model}.parquet",
    log:
        "logs/flores_marginal/{model}.log",
    benchmark:
        "benchmarks/flores_marginal/{model}.tsv"
    wildcard_constraints:
        model=flores_marginal_pattern(),
    priority: 50
    conda:
        "../../envs/marginal.yaml"
    # one thread: as marginal_lm, jobs side by side on 2 cores
    threads: 1
    resources:
        # minutes at 8 codes and English x 2 sentences: SmolLM2-135M's LM-guided marginal (K=32,
        # M=16) took 4-10 s of one loaded CPU thread a sentence in English and Chinese, 22-160 s
        # in Amharic and Hindi
        runtime=attempt_runtime(
            60,
            lambda wc: (len(config["flores"]["marginal"]["codes"]) + 1)
            * config["flores"]["marginal"]["sentences"],
            18,
        ),
        gpu=GPUS,
        mem_mb=attempt_memory("flores_marginal", 8000),
    params:
        # the archive's digest, the model sheet's start token (framed as flores_bits frames a
        # sentence: no end token), the slice
        sha256=lambda wc: flores_settings()["sha256"],
        start_token=lambda wc: RESOLVED[wc.model].bos,
        slice=lambda wc: flores_marginal_settings(),
        sampling=lambda wc: marginal_sampling(),
        corpus=lambda wc: config["flores"]["corpus"],
        dtype=config.get("pretrained", {}).get("dtype", "float32"),
        part="results/flores/marginal/.{model}.part.jsonl",
    script:
        "../scripts/flores_marginal.py"


rule flores_tables:
    input:
        parity="results/flores/parity.csv",
        bits=lambda wc: expand(
            "results/flores/bits/{model}.parquet", model=flores_models()
        ),
        marginal=lambda wc: expand(
            "results/flores/marginal/{model}.parquet", model=flores_marginal_models()
        ),
        petrov_counts=str(PUBLISHED / "petrov2023_token_counts.csv"),
        petrov_map=str(PUBLISHED / "petrov2023_flores_language_map.csv"),
        arnett=str(PUBLISHED / "byte_premium_arnett2024_flores.tsv"),
        goldfish=str(PUBLISHED / "goldfish_flores_chang2024.tsv"),
    output:
        table=report(
            "results/tables/flores.csv",
            caption="../report/flores.rst",
            category="Tables",
            labels={"table": "FLORES-200: parity and bits per code"},
        ),
        ranks="results/tables/flores_ranks.csv",
        marginal="results/tables/flores_marginal.csv",
        figure="results/figures/flores.png",
    log:
        "logs/flores_tables.log",
    localrule: True
    conda:
        "../../envs/report.yaml"
    params:
        bootstrap=lambda wc: bootstrap_settings(),
    script:
        "../scripts/flores_tables.py"
