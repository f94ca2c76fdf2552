# Shared set-up: validation of the config and the language sheets, wildcard constraints, and the
# named helpers that several stages use (which token LMs score a language, which corpus trains
# them). Each stage's own helpers are in workflow/rules/helpers/<stage>.smk, included by its rule
# file (no lambdas in rules).
import os
import sys
from pathlib import Path

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
# The programs of the environment running Snakemake (.venv/bin: pip, and cmake/ninja where `make
# setup` took them from PyPI) come first for every job, also when it was started as
# .venv/bin/snakemake without the environment on PATH (build_kenlm needs them).
# (PATH is always set, hence no `envvars:` assertion.)
_BIN_DIR, _BIN_VAR = str(Path(sys.executable).parent), "PATH"
if _BIN_DIR not in os.environ.get(_BIN_VAR, "").split(os.pathsep):
    os.environ[_BIN_VAR] = os.pathsep.join(
        p for p in [_BIN_DIR, os.environ.get(_BIN_VAR, "")] if p
    )
# A job's own process (on a compute node, which may be offline) loads models from local folders
# only: the hub libraries are told not to try the network (the local rules downloaded them).
if not workflow.is_main_process:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from fairppl.corpus.readers import DEFAULT_PLACEHOLDER_PATTERNS
from fairppl.config.design import (
    check_derived_corpora,
    check_evaluation_corpora,
    check_evaluation_languages,
    derived_corpora,
    evaluation_split,
    train_corpus,
)
from fairppl.core.errors import InputError
from fairppl.core.text import check_character_maps, language_character_map
from fairppl.core.integrity import forget, repair
from fairppl.lm.precision import check_dtype, marginal_runs_pretrained
from fairppl.lm.pretrained import resolve_model
from fairppl.tokenizers.parity import flores_codes
from fairppl.config.settings import (
    check_config,
    check_flores,
    check_references,
    config_source,
)
from fairppl.shannon.players import check_players
from fairppl.config.stages import (
    check_language_lists,
    check_lemma_models,
    check_marginal,
    check_shannon,
    check_shannon_units,
    stage_notes,
)
from fairppl.morphology.lemmatize import lemma_neural_languages
from fairppl.morphology.published import read_published_mcc
from fairppl.config.resources import gpus_per_job, job_runtime, max_runtime
from fairppl.config.overrides import read_schema, replaced_notes, type_overrides
from fairppl.config.cluster import (
    after_planning,
    check_planned_run,
    report_failed_group_submissions,
)
from fairppl.config.sheet import (
    check_against_config,
    check_models,
    read_language_sheet,
    read_model_sheet,
)

SCHEMAS = Path(workflow.basedir) / "workflow" / "schemas"
#: Published figures the tables put beside the study's (resources/README.md).
PUBLISHED = Path(workflow.basedir) / "resources" / "published"
CONFIG_SOURCE = config_source(workflow.configfiles)

try:
    # `--config` values and a profile's `config:` block arrive as text: typed as the schema says,
    # refused naming where they came from (fairppl.config.overrides)
    OVERRIDES = type_overrides(
        config,
        workflow.config_settings.config,
        read_schema(str(SCHEMAS / "config.schema.yaml")),
    )
    check_config(config, str(SCHEMAS / "config.schema.yaml"), CONFIG_SOURCE)
    # before the sheet is read: a reserved corpus id (bible-lemmas) gets its own message
    check_derived_corpora(config, CONFIG_SOURCE)
    LANGUAGES = read_language_sheet(
        config["languages"], str(SCHEMAS / "languages.schema.yaml")
    )
    check_against_config(LANGUAGES, config["corpora"], config["languages"])
    check_evaluation_corpora(config, CONFIG_SOURCE)
    check_references(config, LANGUAGES, CONFIG_SOURCE)
    check_character_maps(
        config.get("normalization", {}).get("characters", {}),
        [row.language for row in LANGUAGES],
        CONFIG_SOURCE,
    )
    check_marginal(config, CONFIG_SOURCE, LANGUAGES)
    MODELS = read_model_sheet(config["models"], str(SCHEMAS / "models.schema.yaml"))
    check_models(MODELS, LANGUAGES, config, config["models"])
    check_evaluation_languages(
        config, LANGUAGES, MODELS, config["languages"], config["models"]
    )
    check_shannon(config, CONFIG_SOURCE, LANGUAGES, MODELS)
    # the FLORES-200 analyses: their archive's entry, LMs and SentencePiece corpus (enabled)
    check_flores(
        config,
        [row.model for row in MODELS],
        [r for r in LANGUAGES if config["corpora"][r.corpus].get("enabled", True)],
        CONFIG_SOURCE,
        flores_codes(PUBLISHED) if config.get("flores", {}).get("enabled") else None,
    )
    # each player's files of shannon.players, as the play server checks them (a cut last
    # line is refused, naming the command that repairs it)
    check_players(config.get("shannon", {}).get("players"), CONFIG_SOURCE)
    # word_ngram.languages_without_spaces, morphology.unimorph.languages against the sheet
    # (UniMorph: also the languages of the published MCC, which the MCC table compares)
    check_language_lists(
        config,
        CONFIG_SOURCE,
        LANGUAGES,
        read_published_mcc(
            str(Path(workflow.basedir) / "resources/published/mcc_cotterell2018.tsv")
        ),
    )
    # the lemmatized control's Transformers each have an unlemmatized twin to compare with
    check_lemma_models(config, CONFIG_SOURCE, lemma_neural_languages(config))
    check_dtype(
        config,
        CONFIG_SOURCE,
        [row.model for row in MODELS],
        marginal_runs_pretrained(config, MODELS),
    )
    # A hub id is checked on the hub only where the run is planned: a job's own parse (on a
    # compute node, perhaps offline) trusts it and loads the downloaded folder.
    RESOLVED = {
        row.model: resolve_model(
            vars(row), sheet=config["models"], probe=workflow.is_main_process
        )
        for row in MODELS
    }
except InputError as err:
    raise WorkflowError(f"invalid input: {err}") from None
validate(config, str(SCHEMAS / "config.schema.yaml"))  # fills in the schema's defaults

# Sealed intermediates (fairppl.core.integrity): the files whose bytes changed since their job
# wrote them are removed, and rule `all` rebuilds them and the sealed files that were deleted
# (Snakemake alone would not: an intermediate whose consumers' outputs exist is not needed).
# Only in the main process (a job's own Snakemake, locally or on a cluster node, parses this file
# too) and only while no other Snakemake holds this directory's lock (it may be writing).
INTEGRITY_REBUILD = []
if workflow.is_main_process and not any(Path(".snakemake", "locks").glob("*.lock")):
    _scan, INTEGRITY_REBUILD, _lines = repair("results")
    if _scan.checked or INTEGRITY_REBUILD:
        print("\n".join(_lines), file=sys.stderr)

ENABLED = [c for c, spec in config["corpora"].items() if spec["enabled"]]
STUDY_LANGUAGES = [row for row in LANGUAGES if row.corpus in ENABLED]
# Valid settings that leave a stage, a bettor or an analysis empty: said in the log at start-up
# and in the report's settings (fairppl.config.stages.stage_notes).
# (and where the command line or a profile replaces a config file's value)
STAGE_NOTES = replaced_notes(OVERRIDES, workflow.configfiles) + stage_notes(
    config, STUDY_LANGUAGES, MODELS
)
if workflow.is_main_process and STAGE_NOTES:
    print("\n".join(f"note: {note}" for note in STAGE_NOTES), file=sys.stderr)
# The configured corpora, and with them the lemmatized copies of lemmas.corpora (bible-lemmas),
# which take their base corpus's settings (fairppl.config.design) and run through the same rules.
CONFIGURED_CORPORA = sorted(config["corpora"], key=lambda c: (-len(c), c))
ALL_CORPORA = sorted(
    CONFIGURED_CORPORA + derived_corpora(config), key=lambda c: (-len(c), c)
)


wildcard_constraints:
    corpus="|".join(ALL_CORPORA),
    language="|".join(sorted({row.language for row in LANGUAGES})),
    order=r"\d+",
    vocab=r"\d+|all",
    stream=r"char|word-v(\d+|all)|spm-(unigram|bpe)-\d+",
    tokenizer=r"char|spm-(unigram|bpe)-\d+",
    type="unigram|bpe",
    size=r"\d+",
    model="|".join(sorted(RESOLVED)) or "no-models",


def attempt_memory(rule_name, first_mb):
    """The `mem_mb` resource of a rule's jobs: ``first_mb`` (or the config's
    resources.memory_mb.<rule>) on the first attempt, times resources.memory_growth on each
    retry, so a job that ends OUT_OF_MEMORY on a cluster is resubmitted asking for more.
    """
    block = config.get("resources", {})
    first = block.get("memory_mb", {}).get(rule_name, first_mb)
    growth = block.get("memory_growth", 2)

    def memory(wildcards, attempt):
        return int(round(first * growth ** (attempt - 1)))

    return memory


def attempt_runtime(minutes, units=None, reference_units=None):
    """The `runtime` resource (minutes) of a rule's jobs: ``minutes`` measured at
    ``reference_units`` units, scaled up to the units the job works on (``units``,
    ``reference_units``: numbers or functions of the wildcards; no ``reference_units`` for a rule
    whose cost does not depend on them), times
    resources.runtime_growth on each retry (a job that ended TIMEOUT comes back with more time),
    at most resources.max_runtime (fairppl.config.resources).
    """
    block = config.get("resources", {})

    def runtime(wildcards, attempt):
        wanted = units(wildcards) if callable(units) else units
        reference = (
            reference_units(wildcards) if callable(reference_units) else reference_units
        )
        return job_runtime(block, minutes, attempt, wanted, reference)

    return runtime


def check_planned_run_at_start():
    """Stop before anything runs or is submitted, in a dry run too, where a `set-resources` or
    `set-threads` entry names no rule, and on SLURM where a group job would ask for more than
    resources.max_runtime minutes or a job names a partition, account or QOS the cluster does
    not list (fairppl.config.cluster); says what could not be checked."""
    try:
        notes = check_planned_run(workflow, max_runtime(config.get("resources", {})))
    except InputError as err:
        raise WorkflowError(f"invalid input: {err}") from None
    if notes:
        print("\n".join(f"note: {note}" for note in notes), file=sys.stderr)


def units_table(corpus):
    """The prepared units table of ``corpus`` (rule prepare_corpus)."""
    return f"results/corpus/{corpus}/units.parquet"


def check_shannon_units_at_start():
    """shannon.max_unit_chars against the prepared units of each corpus of the game, once the
    run is planned: only where a table exists and the plan does not write it again (a changed
    `books`, split or input would make prepare_corpus rebuild it, and the table on disk is stale;
    its own job then says so). After the integrity repair: a damaged table is gone."""
    planned = {str(path) for job in workflow.dag.needrun_jobs() for path in job.output}
    try:
        check_shannon_units(
            config, CONFIG_SOURCE, STUDY_LANGUAGES, units_table, planned.__contains__
        )
    except InputError as err:
        raise WorkflowError(f"invalid input: {err}") from None


def checks_after_planning():
    """The start-up checks that need the planned run, in a dry run too: the prepared units
    against shannon.max_unit_chars, then the cluster's (rules, groups, accounts)."""
    check_shannon_units_at_start()
    check_planned_run_at_start()


if workflow.is_main_process:
    after_planning(workflow, checks_after_planning)
    # a group job whose sbatch failed would leave the run waiting (docs/cluster.md, known issues)
    report_failed_group_submissions()


# GPUs of each job of a GPU rule (train_neural, score_neural, score_pretrained, marginal_lm,
# marginal_caching, the Transformer and pretrained bettors of shannon_bets): config
# resources.gpu, 0 where the site has none (the site profile's `config:` key sets it).
GPUS = gpus_per_job(config.get("resources", {}))


def resolved_spec(corpus):
    """The config block of ``corpus`` with `placeholder_patterns: default` spelled out."""
    spec = dict(config["corpora"][corpus])
    if spec.get("placeholder_patterns") == "default":
        spec["placeholder_patterns"] = list(DEFAULT_PLACEHOLDER_PATTERNS)
    return spec


def corpus_spec(wildcards):
    """The (resolved) config block of the corpus in ``wildcards``."""
    return resolved_spec(wildcards.corpus)


def kenlm_binary(name):
    """Path of a KenLM program built by `build_kenlm` for the configured version and order."""
    kenlm = config["kenlm"]
    return f"resources/kenlm/{kenlm['version']}-o{kenlm['max_order']}/bin/{name}"


def neural_tokenizers(corpus, language):
    """Tokenizers of the neural LMs trained for (corpus, language); none outside the subset."""
    neural = config["neural"]
    if corpus in neural["corpora"] and language in neural["languages"]:
        return neural["tokenizers"]
    return []


def trained_on(pattern):
    """Input function for a scoring rule: ``pattern`` with {corpus} replaced by the corpus whose
    train split trained the model (the Bible's models score the evaluation-only UDHR).
    """

    def path(wildcards):
        values = dict(wildcards.items())
        values["corpus"] = train_corpus(config, wildcards.corpus)
        return pattern.format(**values)

    return path


def eval_split(wildcards):
    """Params function: the split of the corpus in ``wildcards`` whose units are scored."""
    return evaluation_split(config, wildcards.corpus)


def has_trained_models(row):
    """Whether the corpus that trains the models of ``row``'s corpus has ``row``'s language."""
    train = train_corpus(config, row.corpus)
    return any(r.corpus == train and r.language == row.language for r in LANGUAGES)


def pretrained_models(corpus, language):
    """Pretrained model ids of the model sheet that score (corpus, language)."""
    return [
        row.model
        for row in MODELS
        if corpus in row.corpora
        and (language in row.languages or "all" in row.languages)
    ]


def pretrained_dtype(wildcards):
    """The precision a job loads its model in: config pretrained.dtype for a pretrained model
    of the sheet, float32 for the others (a trained Transformer)."""
    if getattr(wildcards, "model", None) in RESOLVED:
        return config.get("pretrained", {}).get("dtype", "float32")
    return "float32"


def token_lm_runs(row):
    """(model, tokenizer) of every token LM (trained Transformer or pretrained) scored on a
    (corpus, language) row."""
    train = train_corpus(config, row.corpus)
    runs = []
    if has_trained_models(row):
        runs += [("transformer", tok) for tok in neural_tokenizers(train, row.language)]
    runs += [(model, "native") for model in pretrained_models(row.corpus, row.language)]
    return runs
