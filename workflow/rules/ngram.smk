# KenLM n-gram models over three token streams of each language's train split: characters (open
# vocabulary, the baseline), words with a closed vocabulary and <unk> (the UNK-correction sweep),
# and SentencePiece pieces (subword n-grams, scored on the default tokenization).


rule char_training_text:
    input:
        units="results/corpus/{corpus}/units.parquet",
    output:
        text=temp("results/ngram/{corpus}/{language}/char.train.txt"),
    log:
        "logs/char_training_text/{corpus}/{language}.log",
    conda:
        "../../envs/fairppl.yaml"
    script:
        "../scripts/char_training_text.py"


rule word_training_text:
    input:
        units="results/corpus/{corpus}/units.parquet",
    output:
        text=temp("results/ngram/{corpus}/{language}/word-v{vocab}.train.txt"),
        vocab="results/ngram/{corpus}/{language}/word-v{vocab}.vocab.json",
    log:
        "logs/word_training_text/{corpus}/{language}.v{vocab}.log",
    conda:
        "../../envs/fairppl.yaml"
    script:
        "../scripts/word_training_text.py"


rule subword_training_text:
    input:
        units="results/corpus/{corpus}/units.parquet",
        tokenizer="results/tokenizers/{corpus}/{language}/{tokenizer}.model",
    output:
        text=temp("results/ngram/{corpus}/{language}/{tokenizer}.train.txt"),
    log:
        "logs/subword_training_text/{corpus}/{language}.{tokenizer}.log",
    conda:
        "../../envs/fairppl.yaml"
    script:
        "../scripts/subword_training_text.py"


rule train_ngram:
    input:
        text="results/ngram/{corpus}/{language}/{stream}.train.txt",
        lmplz=kenlm_binary("lmplz"),
    output:
        arpa=temp("results/ngram/{corpus}/{language}/{stream}.o{order}.arpa"),
    log:
        "logs/train_ngram/{corpus}/{language}/{stream}.o{order}.log",
    benchmark:
        "benchmarks/train_ngram/{corpus}/{language}/{stream}.o{order}.tsv"
    conda:
        "../../envs/fairppl.yaml"
    resources:
        mem_mb=lmplz_memory,
    params:
        discount_fallback=config["char_ngram"]["discount_fallback"],
    script:
        "../scripts/train_ngram.py"


rule binarize_ngram:
    input:
        arpa="results/ngram/{corpus}/{language}/{stream}.o{order}.arpa",
        build_binary=kenlm_binary("build_binary"),
    output:
        model="results/ngram/{corpus}/{language}/{stream}.o{order}.kenlm",
    log:
        "logs/binarize_ngram/{corpus}/{language}/{stream}.o{order}.log",
    conda:
        "../../envs/fairppl.yaml"
    shell:
        "{input.build_binary} -S 1G {input.arpa} {output.model} > {log} 2>&1"


rule score_char_ngram:
    input:
        model="results/ngram/{corpus}/{language}/char.o{order}.kenlm",
        units="results/corpus/{corpus}/units.parquet",
    output:
        scores="results/scores/{corpus}/{language}/kenlm-char-o{order}.char.parquet",
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


rule score_word_ngram:
    input:
        model="results/ngram/{corpus}/{language}/word-v{vocab}.o{order}.kenlm",
        vocab="results/ngram/{corpus}/{language}/word-v{vocab}.vocab.json",
        units="results/corpus/{corpus}/units.parquet",
    output:
        scores="results/scores/{corpus}/{language}/kenlm-word-o{order}.word-v{vocab}.parquet",
    log:
        "logs/score_word_ngram/{corpus}/{language}.v{vocab}.o{order}.log",
    benchmark:
        "benchmarks/score_word_ngram/{corpus}/{language}.v{vocab}.o{order}.tsv"
    conda:
        "../../envs/fairppl.yaml"
    params:
        split=config["char_ngram"]["eval_split"],
    script:
        "../scripts/score_word_ngram.py"


rule score_subword_ngram:
    input:
        model="results/ngram/{corpus}/{language}/{tokenizer}.o{order}.kenlm",
        tokenizer="results/tokenizers/{corpus}/{language}/{tokenizer}.model",
        units="results/corpus/{corpus}/units.parquet",
    output:
        scores="results/scores/{corpus}/{language}/kenlm-subword-o{order}.{tokenizer}.parquet",
    log:
        "logs/score_subword_ngram/{corpus}/{language}.{tokenizer}.o{order}.log",
    benchmark:
        "benchmarks/score_subword_ngram/{corpus}/{language}.{tokenizer}.o{order}.tsv"
    conda:
        "../../envs/fairppl.yaml"
    params:
        split=config["char_ngram"]["eval_split"],
    script:
        "../scripts/score_subword_ngram.py"
