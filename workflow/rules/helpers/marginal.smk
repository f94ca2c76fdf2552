# The named helpers of marginal.smk's rules: their input functions, parameters and targets.


def marginal_languages():
    """Sheet rows of the enabled corpora that the marginal stage covers."""
    block = config.get("marginal", {})
    corpora, languages = block.get("corpora", []), block.get("languages")
    return [
        row
        for row in STUDY_LANGUAGES
        if row.corpus in corpora and (languages is None or row.language in languages)
    ]


def marginal_lm_runs(row):
    """(model, tokenizer) of the token LMs the marginal stage runs on a sheet row: the trained
    Transformers over unigram pieces and the pretrained LMs of the model sheet."""
    lm = config["marginal"]["lm"]
    return [
        (model, tok)
        for model, tok in token_lm_runs(row)
        if (tok == "native" and lm["estimators"])
        or (
            tok.startswith("spm-unigram-")
            and lm["estimators"] + lm["lattice_estimators"]
        )
    ]


def marginal_lm_files():
    """Per-unit marginal tables of the token LMs (rule marginal_lm) of the stage."""
    return [
        f"results/marginal/{row.corpus}/{row.language}/{m}.{tok}.parquet"
        for row in marginal_languages()
        for m, tok in marginal_lm_runs(row)
    ]


def marginal_files():
    """Per-unit marginal tables of every (corpus, language, model, tokenizer) of the stage."""
    ngram = config["marginal"]["ngram"]
    order = config["subword_ngram"]["order"]
    return [
        f"results/marginal/{row.corpus}/{row.language}/kenlm-subword-o{order}."
        f"{ngram['tokenizer']}.parquet"
        for row in marginal_languages()
        if has_trained_models(row)
    ] + marginal_lm_files()


def marginal_length_files():
    """Length sweeps of the subword n-gram (rule marginal_lengths), one per language of
    marginal.lengths.languages that the stage covers."""
    ngram = config["marginal"]["ngram"]
    order = config["subword_ngram"]["order"]
    wanted = config["marginal"]["lengths"]["languages"]
    return [
        f"results/marginal/{row.corpus}/{row.language}/lengths.kenlm-subword-o{order}."
        f"{ngram['tokenizer']}.parquet"
        for row in marginal_languages()
        if row.language in wanted and has_trained_models(row)
    ]


def marginal_caching_files():
    """The caching analyses of marginal_caching, one per Transformer over unigram pieces of the
    stage's languages (none when marginal.caching.n_documents is 0)."""
    if not config["marginal"]["caching"]["n_documents"]:
        return []
    return [
        f"results/marginal/{row.corpus}/{row.language}/caching.{model}.{tok}.csv"
        for row in marginal_languages()
        for model, tok in marginal_lm_runs(row)
        if model == "transformer" and tok.startswith("spm-unigram-")
    ]


def marginal_first_tau():
    """The first unigram temperature of the marginal stage (the caching analysis samples at it)."""
    return float(config["marginal"]["tau"][0])


def samples_needed_files(kind="summary"):
    """Samples-needed summaries (``kind="summary"``) or curves (``"curves"``) of the subword
    n-gram, one per language with trained models (from marginal_samples_needed)."""
    ngram = config["marginal"]["ngram"]
    order = config["subword_ngram"]["order"]
    stem = {"summary": "samples_needed_summary", "curves": "samples_needed"}[kind]
    return [
        f"results/marginal_analyses/{row.corpus}/{row.language}/{stem}."
        f"kenlm-subword-o{order}.{ngram['tokenizer']}.csv"
        for row in marginal_languages()
        if has_trained_models(row)
    ]


def qdefault_block_files():
    """Per-block Q(default) records of the marginal_lm jobs (none without lm-guided)."""
    if "lm-guided" not in config["marginal"]["lm"]["estimators"]:
        return []
    return [f.replace(".parquet", ".blocks.parquet") for f in marginal_lm_files()]


# Published marginal-vs-default numbers, shipped with the workflow (not a study output).
PUBLISHED_MARGINAL = str(
    Path(workflow.basedir) / "resources" / "published" / "marginal.tsv"
)


def marginal_unit_tables():
    """Prepared units tables of the corpora of the marginal stage."""
    corpora = sorted({row.corpus for row in marginal_languages()})
    return expand("results/corpus/{corpus}/units.parquet", corpus=corpora)


def marginal_lm_inputs(wildcards):
    """Inputs of marginal_lm: the units, and the model folder (a trained Transformer's, or a
    pretrained model's, a hub model's downloaded copy included)."""
    inputs = {"units": f"results/corpus/{wildcards.corpus}/units.parquet"}
    if wildcards.model == "transformer":
        inputs["model"] = trained_on(
            "results/neural/{corpus}/{language}/{tokenizer}/model"
        )(wildcards)
        # its pieces' unigram lattice: lattice estimators and the entropy per token
        inputs["tokenizer"] = trained_on(
            "results/tokenizers/{corpus}/{language}/{tokenizer}.model"
        )(wildcards)
    else:
        inputs["model"] = RESOLVED[wildcards.model].load_from
    return inputs


def marginal_lm_load_from(wildcards):
    """The folder marginal_lm loads its model from."""
    if wildcards.model == "transformer":
        return marginal_lm_inputs(wildcards)["model"]
    return RESOLVED[wildcards.model].load_from


def marginal_lm_estimators(wildcards):
    """Estimators of marginal_lm: the `lm` block's, plus its lattice estimators for a
    Transformer over unigram pieces."""
    lm = config["marginal"]["lm"]
    if wildcards.model == "transformer":
        return lm["estimators"] + lm["lattice_estimators"]
    return lm["estimators"]


def marginal_lm_max_units(wildcards):
    """Units per language of marginal_lm: the `lm` block's max_units for a trained Transformer,
    its pretrained_max_units for a model of the sheet."""
    lm = config["marginal"]["lm"]
    if wildcards.model == "transformer":
        return lm["max_units"]
    return lm["pretrained_max_units"]


def marginal_lm_special(wildcards):
    """The model sheet's start/end tokens of a pretrained model; none for a trained one."""
    if wildcards.model == "transformer":
        return {}
    return RESOLVED[wildcards.model].special_tokens()


def marginal_lm_constraint():
    """Wildcard constraint of marginal_lm's model: the trained Transformer or a sheet model."""
    return "|".join(["transformer", *sorted(RESOLVED)])


def marginal_sampling():
    """The marginal stage's settings shared by its jobs: seed, K, tau, L and M."""
    return {k: config["marginal"][k] for k in ("seed", "K", "tau", "L", "M")}
