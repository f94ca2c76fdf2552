# The named helpers of metrics.smk's rules: their input functions, parameters and targets.


def score_files():
    """Per-unit score tables of every (corpus, language, model, tokenizer) in the study."""
    files = []
    word, subword = config["word_ngram"], config["subword_ngram"]
    for row in STUDY_LANGUAGES:
        prefix = f"results/scores/{row.corpus}/{row.language}"
        files += [f"{prefix}/{m}.{tok}.parquet" for m, tok in token_lm_runs(row)]
        if not has_trained_models(row):
            continue
        files += [
            f"{prefix}/kenlm-char-o{o}.char.parquet"
            for o in config["char_ngram"]["orders"]
        ]
        if has_word_sweep(row):
            files += [
                f"{prefix}/kenlm-word-o{word['order']}.word-v{v}.parquet"
                for v in word["vocab_sizes"]
            ]
        if train_corpus(config, row.corpus) in subword["corpora"]:
            files += [
                f"{prefix}/kenlm-subword-o{subword['order']}.{tok}.parquet"
                for tok in subword["tokenizers"]
            ]
    return files


def convention_files():
    """The scoring conventions recorded by every token-LM scoring job."""
    return [
        f"results/scores/{row.corpus}/{row.language}/{m}.{tok}.conventions.json"
        for row in STUDY_LANGUAGES
        for m, tok in token_lm_runs(row)
    ]


def report_settings():
    """The settings the report states beside the numbers."""
    return {
        "corpora": {c: resolved_spec(c) for c in ENABLED},
        "split": config["split"],
        "char_ngram": config["char_ngram"],
        "evaluation": config["evaluation"],
        "normalization": config["normalization"],
        "kenlm": config["kenlm"],
        "tokenizers": config["tokenizers"],
        "word_ngram": config["word_ngram"],
        "subword_ngram": config["subword_ngram"],
        "neural": config["neural"],
        "scoring": config["scoring"],
        "pretrained": config["pretrained"],
        "models": [vars(row) for row in MODELS],
        "languages": report_languages(),
        "notes": STAGE_NOTES,
    }


def bootstrap_settings():
    """fairppl.stats.bootstrap.BootstrapSettings fields from the config's `report` block."""
    rep = config["report"]
    return {
        "replicates": rep["bootstrap_replicates"],
        "seed": rep["bootstrap_seed"],
        "level": rep["ci_level"],
    }


def corpus_figures():
    """corpus -> its ranking figure: the first enabled corpus is the main figure, the others
    are second-domain checks."""
    return {
        corpus: (
            "results/figures/main.png"
            if i == 0
            else f"results/figures/second_domain_{corpus}.png"
        )
        for i, corpus in enumerate(ENABLED)
    }


def second_domain_figures():
    """Ranking figures of the enabled corpora after the first."""
    return [f"results/figures/second_domain_{corpus}.png" for corpus in ENABLED[1:]]


def report_languages():
    """The language sheet rows of the study (name, script, ISO code) for figures and tables."""
    return [vars(row) for row in STUDY_LANGUAGES]


def study_outputs():
    """Everything `rule all` asks for."""
    return tokenizer_records() + [
        "results/tables/bpu.parquet",
        "results/tables/bpu.csv",
        "results/tables/models.csv",
        "results/tables/tokenizers.csv",
        "results/tables/correlates.csv",
        "results/tables/word_sweep_decisions.csv",
        "results/tables/marginal.csv",
        "results/tables/morphology.csv",
        "results/tables/difficulty.csv",
        *shannon_outputs().values(),
        *flores_outputs().values(),
        "results/report.html",
    ]


def correlate_tokenizers():
    """'corpus/language/tokenizer' -> SentencePiece model file, for the pieces-per-word features
    of the correlates table (every tokenizer of the study)."""
    return {
        f"{row.corpus}/{row.language}/{tok}": f"results/tokenizers/{row.corpus}/{row.language}/{tok}.model"
        for row in STUDY_LANGUAGES
        if row.corpus in config["tokenizers"]["corpora"]
        for tok in spm_tokenizers()
    }


def morphology_report_inputs(wildcards):
    """The report's inputs from the morphology stage: its tables (``morphology_<name>``) and
    figures (``morphology_figure_<source>``)."""
    inputs = {f"morphology_{name}": path for name, path in morphology_tables().items()}
    inputs.update(
        {f"morphology_figure_{s}": p for s, p in morphology_figures().items()}
    )
    return inputs


def shannon_report_inputs(wildcards):
    """The report's inputs from the Shannon game (``shannon_<name>``), if it runs."""
    inputs = {f"shannon_{name}": path for name, path in shannon_outputs().items()}
    if inputs:
        inputs["shannon_published"] = PUBLISHED_SHANNON
    return inputs


def integrity_rebuild(wildcards):
    """Input function of the `all` rule, the intermediates the start-up check removed as corrupt
    or found deleted that a rule of this configuration produces; the digest records of the
    others (outputs of settings no longer configured) are dropped."""
    producible = []
    for path in INTEGRITY_REBUILD:
        if any(r.is_producer(str(path)) for r in workflow.rules if r.name != "all"):
            producible.append(str(path))
        else:
            forget(path)
            print(
                f"{path}: no rule of this configuration makes it; forgotten",
                file=sys.stderr,
            )
    return producible
