"""The lemmatized control in the workflow: derived corpus names (`bible-lemmas` takes bible's
settings, the suffix is reserved), the lemmas config block, the dry run of the default config and
a real run of the test config that trains and scores the character n-grams and the Transformer
on lemmas through the existing rules."""

import polars as pl
import pytest
import yaml

from conftest import ROOT, make_workdir, snakemake
from fairppl.config.design import (
    base_corpus,
    check_derived_corpora,
    corpus_settings,
    derived_corpora,
    evaluation_split,
    train_corpus,
)
from fairppl.core.errors import InputError
from fairppl.morphology.lemmatize import (
    check_lemma_config,
    lemma_neural_languages,
    lemmatize_text,
)
from test_workflow import _job_counts


def _config(lemmas=("bible",)):
    return {
        "corpora": {
            "bible": {"enabled": True, "books": [8]},
            "udhr": {"enabled": True, "models_from": "bible", "eval_split": "all"},
        },
        "evaluation": {"split": "test"},
        "neural": {"languages": ["eng", "zho", "deu"]},
        "lemmas": {"corpora": list(lemmas), "char_ngram": True, "neural_languages": None},
    }


def test_derived_corpus_takes_its_base_settings():
    config = _config(["bible", "udhr"])
    assert derived_corpora(config) == ["bible-lemmas", "udhr-lemmas"]
    assert base_corpus(config, "bible-lemmas") == "bible"
    assert base_corpus(config, "bible") == "bible"
    assert corpus_settings(config, "bible-lemmas") == {"enabled": True, "books": [8]}
    assert train_corpus(config, "bible-lemmas") == "bible-lemmas"
    assert evaluation_split(config, "bible-lemmas") == "test"
    # the lemmatized UDHR is scored by the models trained on the lemmatized Bible
    assert train_corpus(config, "udhr-lemmas") == "bible-lemmas"
    assert evaluation_split(config, "udhr-lemmas") == "all"
    assert train_corpus(config, "udhr") == "bible"
    check_derived_corpora(config)
    # a copy that lemmas.corpora does not ask for is no corpus
    with pytest.raises(InputError, match="'udhr-lemmas' names no corpus"):
        base_corpus(_config(["bible"]), "udhr-lemmas")
    with pytest.raises(InputError, match="'quran' names no corpus"):
        train_corpus(config, "quran")


def test_derived_corpus_config_errors():
    config = _config()
    config["corpora"]["bible-lemmas"] = {"enabled": True}
    with pytest.raises(InputError, match="corpora.bible-lemmas: the suffix '-lemmas' is reserved"):
        check_derived_corpora(config, "config.yaml")
    with pytest.raises(InputError, match="'lemmas.corpora': 'bibel' names no corpus"):
        check_derived_corpora(_config(["bibel"]))
    with pytest.raises(InputError, match="'udhr' takes its models from 'bible', which is not "
                                         "lemmatized"):
        check_derived_corpora(_config(["udhr"]))
    config = _config()
    config["corpora"]["bible"]["enabled"] = False
    with pytest.raises(InputError, match="corpus 'bible' is not enabled"):
        check_derived_corpora(config)


class Row:
    def __init__(self, corpus, language):
        self.corpus, self.language = corpus, language


def test_neural_languages_on_lemmas():
    rows = [Row("bible", lang) for lang in ("eng", "zho", "deu", "kor")]
    config = _config()
    # null: the neural block's languages simplemma covers (zho is not)
    assert lemma_neural_languages(config) == ["eng", "deu"]
    check_lemma_config(config, rows)
    config["lemmas"]["neural_languages"] = ["kor"]
    with pytest.raises(InputError, match="'kor' is not lemmatized .*no Korean dictionary"):
        check_lemma_config(config, rows)
    config["lemmas"]["neural_languages"] = ["fra"]
    with pytest.raises(InputError, match="'fra' has no row for corpus 'bible'"):
        check_lemma_config(config, rows)


def _edit_config(wd, edit):
    path = wd / "config" / "config.yaml"
    cfg = yaml.safe_load(path.read_text(encoding="utf-8"))
    edit(cfg)
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")


@pytest.mark.e2e
def test_dry_run_default_config(tmp_path):
    wd = make_workdir(tmp_path / "wd", ROOT / "config")
    proc = snakemake(wd, "--dry-run", "--forceall", "lemmas")
    assert proc.returncode == 0, proc.stderr
    counts = _job_counts(proc.stdout)
    # 17 covered Bible languages: one character 5-gram each; the Transformer over characters for
    # the 5 covered languages of the neural block (eng, deu, rus, ara, hin; not zho)
    assert counts["lemmatize_corpus"] == 1 and counts["lemmatizer_coverage"] == 1
    assert counts["train_ngram"] == 17 and counts["score_char_ngram"] == 17
    assert counts["train_neural"] == 5 and counts["score_neural"] == 5
    assert counts["forms_per_lemma"] == 1 and counts["prepare_corpus"] == 1
    assert "results/scores/bible-lemmas/hin/transformer.char.parquet" in proc.stdout
    assert "results/scores/bible-lemmas/zho/" not in proc.stdout
    # The default target includes them (through the morphology tables and the report).
    full = _job_counts(snakemake(wd, "--dry-run", "--forceall").stdout)
    assert full["lemmatize_corpus"] == 1 and full["score_char_ngram"] == 44 + 17


@pytest.mark.e2e
def test_dry_run_lemmatized_udhr_uses_the_lemmatized_bible_models(tmp_path):
    wd = make_workdir(tmp_path / "wd", ROOT / "tests" / "config")
    _edit_config(wd, lambda c: c["lemmas"].update(corpora=["bible", "udhr"]))
    proc = snakemake(wd, "--dry-run", "--forceall", "lemmas")
    assert proc.returncode == 0, proc.stderr
    counts = _job_counts(proc.stdout)
    # bible-lemmas: eng and tur (kor not covered); udhr-lemmas: eng (the test config's UDHR has
    # eng and kor); orders 5 and 7; the Transformer for eng only (kor is not covered), trained
    # once on bible-lemmas and scoring both copies
    assert counts["lemmatize_corpus"] == 2
    assert counts["train_ngram"] == 2 * 2 and counts["score_char_ngram"] == 3 * 2
    assert counts["train_neural"] == 1 and counts["score_neural"] == 2
    assert "results/scores/udhr-lemmas/eng/transformer.char.parquet" in proc.stdout
    assert "results/ngram/udhr-lemmas/" not in proc.stdout
    assert "results/scores/udhr-lemmas/kor/" not in proc.stdout


@pytest.mark.parametrize("edit, expected", [
    (lambda c: c["corpora"].update({"bible-lemmas": dict(c["corpora"]["bible"])}),
     "corpora.bible-lemmas: the suffix '-lemmas' is reserved"),
    (lambda c: c["lemmas"].update(neural_languages=["kor"]),
     "field 'lemmas.neural_languages': 'kor' is not lemmatized"),
    (lambda c: c["lemmas"].update(corpora=["udhr"]),
     "'udhr' takes its models from 'bible', which is not lemmatized"),
    (lambda c: c["lemmas"].update(char_ngrams=True), "unknown key(s) ['char_ngrams']"),
])
@pytest.mark.e2e
def test_bad_lemmas_config_is_reported(tmp_path, edit, expected):
    wd = make_workdir(tmp_path / "wd", ROOT / "tests" / "config")
    _edit_config(wd, edit)
    proc = snakemake(wd, "--dry-run")
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert expected in out, out[-3000:]


@pytest.mark.e2e
def test_lemma_scores_in_the_test_config(study):
    """The test study (rule `all` includes the lemmatized control) lemmatizes eng and tur, lists
    kor as not covered, and trains and scores the n-grams and the Transformer on lemmas."""
    wd, _ = study
    results = wd / "results"
    units = pl.read_parquet(results / "corpus" / "bible" / "units.parquet")
    lemmas = pl.read_parquet(results / "corpus" / "bible-lemmas" / "units.parquet")
    # same units and splits, for the covered languages (eng, tur; kor is not covered)
    kept = units.filter(pl.col("language").is_in(["eng", "tur"]))
    assert lemmas.select("unit_id", "language", "split", "position").equals(
        kept.select("unit_id", "language", "split", "position"))
    assert set(lemmas["corpus"]) == {"bible-lemmas"}
    # the rule's text is the library's lemmatization of the same unit
    for row in kept.head(5).iter_rows(named=True):
        got = lemmas.filter((pl.col("unit_id") == row["unit_id"])
                            & (pl.col("language") == row["language"]))["text"].item()
        assert got == lemmatize_text(row["text"], row["language"])

    coverage = pl.read_csv(results / "tables" / "lemmatizer_coverage.csv")
    cov = {r["language"]: r for r in coverage.iter_rows(named=True)}
    assert cov["eng"]["covered"] and cov["tur"]["covered"] and not cov["kor"]["covered"]
    assert "no Korean dictionary" in cov["kor"]["reason"]
    # Turkish (agglutinative) changes more of its word tokens than English
    assert 0.05 < cov["eng"]["share_changed"] < cov["tur"]["share_changed"] < 0.9

    forms = pl.read_csv(results / "tables" / "forms_per_lemma.csv")
    fpl = {r["language"]: r for r in forms.iter_rows(named=True)}
    assert fpl["eng"]["n_forms"] == 181612 and fpl["eng"]["n_lemmas"] == 77504
    assert fpl["tur"]["forms_per_lemma"] > fpl["eng"]["forms_per_lemma"]
    assert fpl["kor"]["n_forms"] is None and fpl["kor"]["note"].startswith("not covered")

    for lang in ("eng", "tur"):
        for model in ("kenlm-char-o5", "kenlm-char-o7"):
            lem = pl.read_parquet(results / "scores" / "bible-lemmas" / lang
                                  / f"{model}.char.parquet")
            assert set(lem["corpus"]) == {"bible-lemmas"}
            assert lem["split"].unique().to_list() == ["test"]
        lem = pl.read_parquet(results / "scores" / "bible-lemmas" / lang
                              / "kenlm-char-o5.char.parquet")
        word = pl.read_parquet(results / "scores" / "bible" / lang / "kenlm-char-o5.char.parquet")
        # the same test units, each scored on fewer characters (lemmas are shorter than forms)
        assert lem["unit_id"].to_list() == word["unit_id"].to_list()
        assert lem["n_chars"].sum() < word["n_chars"].sum()
        assert (lem["bits"] > 0).all()
    assert not (results / "scores" / "bible-lemmas" / "kor").exists()
    neural = pl.read_parquet(results / "scores" / "bible-lemmas" / "eng" / "transformer.char.parquet")
    word = pl.read_parquet(results / "scores" / "bible" / "eng" / "transformer.char.parquet")
    assert neural["unit_id"].to_list() == word["unit_id"].to_list()
    assert (neural["bits"] > 0).all() and neural["bits"].is_finite().all()
    assert not (results / "scores" / "bible-lemmas" / "tur" / "transformer.char.parquet").exists()
