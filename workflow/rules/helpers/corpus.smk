# The named helpers of corpus.smk's rules: their input functions, parameters and targets.


def corpus_sources(wildcards):
    """language -> source_id for the corpus in ``wildcards``, in sheet order."""
    return {r.language: r.source_id for r in LANGUAGES if r.corpus == wildcards.corpus}


def corpus_character_maps(wildcards):
    """language -> its character map (config normalization.characters: the "*" entries and the
    language's own) for the configured languages of the corpus in ``wildcards``."""
    maps = config["normalization"]["characters"]
    return {
        r.language: language_character_map(maps, r.language)
        for r in LANGUAGES
        if r.corpus == wildcards.corpus
    }


def prepare_spec(wildcards):
    """The (resolved) config block of the corpus in ``wildcards`` less `common_min_share`, which
    the preparation reads from the config (it only checks that the common unit set is not
    empty): changing it re-runs the tables (bpu_table), not the corpus and its models.
    """
    return {k: v for k, v in corpus_spec(wildcards).items() if k != "common_min_share"}


def common_min_shares():
    """corpus -> its `common_min_share` (absent: 0), for every enabled corpus."""
    return {
        c: float(config["corpora"][c].get("common_min_share") or 0) for c in ENABLED
    }


def english_language(wildcards):
    """The English reference language id of the corpus in ``wildcards``."""
    return next(
        r.language
        for r in LANGUAGES
        if r.corpus == wildcards.corpus and r.english_reference
    )


def corpus_source_file(wildcards):
    """Input function: the installed source file of the corpus in ``wildcards``."""
    return corpus_source_path(wildcards.corpus)


def corpus_reference_file(wildcards):
    """Input function: the Bible database of the corpus named by ``english_from`` (a CES XML
    corpus's English reference, fairppl.corpus.ces), or none."""
    name = config["corpora"][wildcards.corpus].get("english_from")
    return corpus_source_path(name) if name else []


def split_scheme():
    """Keyword arguments of fairppl.corpus.splits.SplitScheme from the config."""
    s = config["split"]
    return dict(
        block_size=s["block_size"],
        dev_start=s["dev"][0],
        dev_end=s["dev"][1],
        test_start=s["test"][0],
        test_end=s["test"][1],
    )


def unit_tables():
    """Prepared corpus tables of the enabled corpora."""
    return expand("results/corpus/{corpus}/units.parquet", corpus=ENABLED)


def dropped_tables():
    """Placeholder-drop reports of the enabled corpora."""
    return expand("results/corpus/{corpus}/dropped.tsv", corpus=ENABLED)


def europarl_pivot(wildcards):
    """Params function: the pivot language code of the Europarl corpus in ``wildcards``."""
    return config["corpora"][wildcards.corpus].get("pivot", "en")


def europarl_languages(wildcards):
    """Params function: the language code of each archive of ``europarl_archive_files``, in its
    order."""
    return list(europarl_archives(wildcards.corpus))
