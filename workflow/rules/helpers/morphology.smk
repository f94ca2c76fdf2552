# The named helpers of morphology.smk's rules: the languages of each MCC source and their records.
from fairppl.config.stages import check_apertium_tools, check_morphology
from fairppl.morphology.apertium import ANALYSERS
from fairppl.morphology.published import read_published_mcc

# Published MCC of Cotterell et al. 2018, shipped with the workflow (not a study output).
PUBLISHED_MCC = str(
    Path(workflow.basedir) / "resources" / "published" / "mcc_cotterell2018.tsv"
)
# How far fairppl.morphology.mcc's rule is from those values, where a lexicon could be read.
MCC_RULE_CHECK = str(
    Path(workflow.basedir) / "resources" / "published" / "mcc_rule_check.tsv"
)

try:
    PUBLISHED_MCC_LANGUAGES = sorted(read_published_mcc(PUBLISHED_MCC))
    check_morphology(config, CONFIG_SOURCE, ANALYSERS)
    # Only where Snakemake plans the run: mcc_apertium is a local rule, so a compute node's own
    # parse of this file (for another rule's job) needs no Apertium.
    if workflow.is_main_process:
        check_apertium_tools(config, CONFIG_SOURCE, ANALYSERS)
except InputError as err:
    raise WorkflowError(f"invalid input: {err}") from None


def mcc_records():
    """Every per-language MCC record of the enabled sources."""
    block = config["morphology"]
    files = expand(
        "results/morphology/mcc/published/{language}.json",
        language=PUBLISHED_MCC_LANGUAGES,
    )
    files += expand(
        "results/morphology/mcc/apertium/{language}.json",
        language=block["apertium_languages"],
    )
    if block["unimorph"]["enabled"]:
        files += expand(
            "results/morphology/mcc/unimorph/{language}.json",
            language=block["unimorph"]["languages"],
        )
    return files


def unimorph_url(wildcards):
    """The download URL of a language's UniMorph lexicon."""
    pattern = config["morphology"]["unimorph"]["url"]
    return pattern.replace("{language}", wildcards.language)


def morphology_corpus():
    """The corpus whose languages the morphology analyses compare (morphology.corpus)."""
    return config["morphology"]["corpus"]


def difficulty_corpora():
    """The corpora of the difficulty model and the fairness summary: morphology.corpus, then
    morphology.difficulty_corpora."""
    block = config["morphology"]
    return [block["corpus"]] + [
        c for c in block.get("difficulty_corpora", []) if c != block["corpus"]
    ]


def difficulty_score_files():
    """The open-vocabulary score tables of the difficulty corpora."""
    return [
        path for corpus in difficulty_corpora() for path in open_score_files(corpus)
    ]


def permutation_settings():
    """fairppl.stats.permutation.PermutationSettings fields: morphology.permutations, seeded
    and levelled as the report's bootstrap."""
    return {
        "permutations": config["morphology"]["permutations"],
        "seed": config["report"]["bootstrap_seed"],
        "level": config["report"]["ci_level"],
    }


def language_families():
    """Language id -> family of the sheet's `family` column ("" where not known), for the
    family-controlled tests of the stage's correlations; None where the sheet gives none.
    """
    from fairppl.config.sheet import families_by_language

    return families_by_language(LANGUAGES)


def difficulty_settings():
    """The difficulty model and its interval (morphology.difficulty)."""
    block = config["morphology"]["difficulty"]
    return {"model": block["model"], "interval": block["interval"]}


def open_score_files(corpus=None):
    """Per-unit score tables of the open-vocabulary models (every model but the closed-vocabulary
    word n-grams), of ``corpus`` or of every corpus."""
    return [
        path
        for path in score_files()
        if not Path(path).name.startswith("kenlm-word-")
        and (corpus is None or path.startswith(f"results/scores/{corpus}/"))
    ]


def difficulty_sheet():
    """The sheet's rows of the difficulty corpora (corpus, language, iso639_3,
    english_reference): which translations are of one language."""
    return [
        {
            "corpus": row.corpus,
            "language": row.language,
            "iso639_3": row.iso639_3,
            "english_reference": row.english_reference,
        }
        for row in LANGUAGES
        if row.corpus in difficulty_corpora()
    ]


def english_reference(corpus):
    """The language id of ``corpus``'s English reference rows in the sheet."""
    return next(
        row.language
        for row in LANGUAGES
        if row.corpus == corpus and row.english_reference
    )


def morphology_figures():
    """Figure 1 of Cotterell et al. 2018 for each MCC source of the study."""
    sources = ["published"]
    if config["morphology"]["apertium_languages"]:
        sources.append("apertium")
    if config["morphology"]["unimorph"]["enabled"]:
        sources.append("unimorph")
    return {s: f"results/figures/morphology_{s}.png" for s in sources}


def morphology_tables():
    """The stage's tables, by the names of fairppl.morphology.TABLES."""
    from fairppl.morphology import TABLES

    return {name: f"results/tables/{csv}" for name, csv in TABLES.items()}
