# The open-vocabulary character n-gram baseline: KenLM over characters (a visible symbol for the
# space), trained on each language's train split only and scored on the evaluation split.


rule char_training_text:
    input:
        units="results/corpus/{corpus}/units.parquet",
    output:
        text=temp("results/ngram/{corpus}/{language}/train.chars.txt"),
    log:
        "logs/char_training_text/{corpus}/{language}.log",
    conda:
        "../../envs/fairppl.yaml"
    script:
        "../scripts/char_training_text.py"


rule train_char_ngram:
    input:
        text="results/ngram/{corpus}/{language}/train.chars.txt",
        lmplz=kenlm_binary("lmplz"),
    output:
        arpa=temp("results/ngram/{corpus}/{language}/char.o{order}.arpa"),
    log:
        "logs/train_char_ngram/{corpus}/{language}.o{order}.log",
    benchmark:
        "benchmarks/train_char_ngram/{corpus}/{language}.o{order}.tsv"
    conda:
        "../../envs/fairppl.yaml"
    resources:
        mem_mb=lmplz_memory,
    params:
        discount_fallback=config["char_ngram"]["discount_fallback"],
    script:
        "../scripts/train_char_ngram.py"


rule binarize_char_ngram:
    input:
        arpa="results/ngram/{corpus}/{language}/char.o{order}.arpa",
        build_binary=kenlm_binary("build_binary"),
    output:
        model="results/ngram/{corpus}/{language}/char.o{order}.kenlm",
    log:
        "logs/binarize_char_ngram/{corpus}/{language}.o{order}.log",
    conda:
        "../../envs/fairppl.yaml"
    shell:
        "{input.build_binary} -S 1G {input.arpa} {output.model} > {log} 2>&1"


rule score_char_ngram:
    input:
        model="results/ngram/{corpus}/{language}/char.o{order}.kenlm",
        units="results/corpus/{corpus}/units.parquet",
    output:
        scores="results/scores/{corpus}/{language}/kenlm-char-o{order}.parquet",
    log:
        "logs/score_char_ngram/{corpus}/{language}.o{order}.log",
    benchmark:
        "benchmarks/score_char_ngram/{corpus}/{language}.o{order}.tsv"
    conda:
        "../../envs/fairppl.yaml"
    params:
        split=config["char_ngram"]["eval_split"],
    script:
        "../scripts/score_char_ngram.py"
