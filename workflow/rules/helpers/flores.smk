# The named helpers of flores.smk's rules: their input functions, parameters and targets.

import re


def flores_enabled():
    """Whether the FLORES-200 analyses run (config `flores.enabled`)."""
    return bool(config.get("flores", {}).get("enabled"))


def flores_archive():
    """The FLORES-200 archive: the download (or mirror copy) of the corpora entry `flores.corpus`."""
    return corpus_source_path(config["flores"]["corpus"])


def flores_models():
    """The pretrained LMs of `flores.models`."""
    return list(config["flores"]["models"])


def flores_model_pattern():
    """The `model` wildcard of flores_bits: one of `flores.models` (nothing when off)."""
    if not flores_enabled():
        return "$^"
    return "|".join(re.escape(m) for m in flores_models())


def flores_model_folders():
    """model -> the folder each LM of `flores.models` loads from (its tokenizer too)."""
    return {m: RESOLVED[m].load_from for m in flores_models()}


def flores_model_folder(wildcards):
    """Input function: the folder the LM in ``wildcards`` loads from."""
    return RESOLVED[wildcards.model].load_from


def flores_marginal_models():
    """The pretrained LMs of `flores.marginal.models` (none when the analyses are off)."""
    if not flores_enabled():
        return []
    return list((config["flores"].get("marginal") or {}).get("models") or [])


def flores_marginal_pattern():
    """The `model` wildcard of flores_marginal: one of `flores.marginal.models`."""
    models = flores_marginal_models()
    return "|".join(re.escape(m) for m in models) if models else "$^"


def flores_marginal_settings():
    """The slice flores_marginal reads: `flores.marginal.codes` and `sentences`."""
    block = config["flores"]["marginal"]
    return {"codes": list(block["codes"]), "sentences": block["sentences"]}


def flores_spm_corpora():
    """The corpora of `flores.spm_corpora` (whose SentencePiece models count their languages)."""
    return list(config["flores"].get("spm_corpora") or [])


def flores_spm_dirs():
    """corpus -> the folder of its SentencePiece models, for each of `flores.spm_corpora`."""
    return {corpus: f"results/tokenizers/{corpus}" for corpus in flores_spm_corpora()}


def flores_spm_models():
    """The study's SentencePiece models of `flores.spm_corpora`, one per corpus, language and
    tokenizer (each counts its language's FLORES code; a language FLORES lacks is skipped with a
    note)."""
    corpora = flores_spm_corpora()
    return [
        f"results/tokenizers/{row.corpus}/{row.language}/{tok}.model"
        for row in STUDY_LANGUAGES
        if row.corpus in corpora
        for tok in spm_tokenizers()
    ]


def flores_bits_settings():
    """What flores_bits reads of the config (so that a setting of the other FLORES rules does
    not rerun its jobs): the archive's digest, the codes, the start tokens, the sample size.
    """
    settings = flores_settings()
    return {k: settings[k] for k in ("sha256", "codes", "start_tokens", "sentences")}


def flores_settings():
    """What the FLORES-200 scripts read of the config: the archive's digest, the codes, the
    models' start tokens (the model sheet's `bos`), the sample size, the SentencePiece corpora
    and their tokenizer ids (their languages' rows are read from the sheet by the script).
    """
    block = config["flores"]
    spec = config["corpora"][block["corpus"]]
    corpora = flores_spm_corpora()
    return {
        "sha256": spec["sha256"],
        "codes": list(block["codes"]) or None,
        "start_tokens": {m: RESOLVED[m].bos for m in flores_models()},
        "sentences": block["sentences"],
        "spm_corpora": corpora,
        "spm_ids": spm_tokenizers() if corpora else [],
    }


def flores_outputs():
    """The FLORES-200 tables and figure (none when `flores.enabled` is false)."""
    if not flores_enabled():
        return {}
    return {
        "table": "results/tables/flores.csv",
        "marginal": "results/tables/flores_marginal.csv",
        "petrov": "results/tables/flores_petrov.csv",
        "byte_premium": "results/tables/flores_byte_premium.csv",
        "ranks": "results/tables/flores_ranks.csv",
        "parity": "results/flores/parity.csv",
        "figure": "results/figures/flores.png",
    }


def flores_report_inputs(wildcards):
    """The report's inputs from the FLORES-200 analyses (``flores_<name>``), if they run."""
    return {f"flores_{name}": path for name, path in flores_outputs().items()}
