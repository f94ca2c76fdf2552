# Small decoder-only Transformers trained per language with torch (CUDA when present, CPU
# otherwise), saved so that AutoModelForCausalLM/AutoTokenizer load them, and scored by the one
# canonical scoring path.


include: "helpers/neural.smk"


rule train_neural:
    input:
        unpack(neural_inputs),
    output:
        model=directory("results/neural/{corpus}/{language}/{tokenizer}/model"),
        stats="results/neural/{corpus}/{language}/{tokenizer}/train_stats.json",
    log:
        "logs/train_neural/{corpus}/{language}.{tokenizer}.log",
    benchmark:
        "benchmarks/train_neural/{corpus}/{language}.{tokenizer}.tsv"
    priority: 40
    conda:
        "../../envs/torch.yaml"
    threads: 2
    resources:
        # Minutes: the default study's 12 models (250 steps) took ~9 min together on 2 CPU
        # cores; scale with neural.steps and the model size.
        runtime=attempt_runtime(60),
        gpu=GPUS,
        mem_mb=attempt_memory("train_neural", 4000),
    params:
        hyper=neural_hyperparameters(),
        workdir="results/neural/{corpus}/{language}/{tokenizer}",
    script:
        "../scripts/train_neural.py"


rule score_neural:
    input:
        model=trained_on("results/neural/{corpus}/{language}/{tokenizer}/model"),
        units="results/corpus/{corpus}/units.parquet",
    output:
        scores="results/scores/{corpus}/{language}/transformer.{tokenizer}.parquet",
        conventions="results/scores/{corpus}/{language}/transformer.{tokenizer}.conventions.json",
    log:
        "logs/score_neural/{corpus}/{language}.{tokenizer}.log",
    benchmark:
        "benchmarks/score_neural/{corpus}/{language}.{tokenizer}.tsv"
    conda:
        "../../envs/torch.yaml"
    # One thread: as for score_pretrained, two jobs side by side beat one job on two threads.
    threads: 1
    resources:
        # minutes; a small Transformer scores 200 units in seconds (scaled to scoring.max_units)
        runtime=attempt_runtime(30, config["scoring"]["max_units"], 200),
        gpu=GPUS,
        mem_mb=attempt_memory("score_neural", 4000),
    params:
        split=eval_split,
        scoring=config["scoring"],
        parts="results/scores/{corpus}/{language}/.transformer.{tokenizer}.parts",
        # the model must have been trained with these (checked before scoring); a change of
        # the config's settings also reruns the job
        hyper=neural_hyperparameters(),
    script:
        "../scripts/score_lm.py"
