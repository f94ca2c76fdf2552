# The named helpers of morphology.smk's rules: the languages of each MCC source and their records.
from fairppl.morphology.apertium import ANALYSERS
from fairppl.morphology.published import read_published_mcc

# Published MCC of Cotterell et al. 2018, shipped with the workflow (not a study output).
PUBLISHED_MCC = str(
    Path(workflow.basedir) / "resources" / "published" / "mcc_cotterell2018.tsv"
)

try:
    PUBLISHED_MCC_LANGUAGES = sorted(read_published_mcc(PUBLISHED_MCC))
except InputError as err:
    raise WorkflowError(f"invalid input: {err}") from None
_unknown = [
    lang for lang in config["morphology"]["apertium_languages"] if lang not in ANALYSERS
]
if _unknown:
    raise WorkflowError(
        f"invalid input: {CONFIG_SOURCE}: morphology.apertium_languages {_unknown} have no "
        f"Apertium analyser in fairppl.morphology.apertium.ANALYSERS (known: "
        f"{', '.join(sorted(ANALYSERS))})"
    )


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
