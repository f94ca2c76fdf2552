"""The lemmatized control in the workflow: the lemmas config block refused at start-up, the dry run
of the default config and a real run of the test config that trains and scores the character
n-grams and the Transformer on lemmas through the existing rules. The derived corpus names and
the config block without Snakemake: tests/unit/test_lemmas_config.py."""

import polars as pl
import pytest

from conftest import ROOT, ahead, make_workdir, snakemake
from fairppl.morphology.lemmatize import lemmatize_text
from test_workflow import _edit_config, _job_counts, config_edit_dry_runs


@ahead("test_dry_run_default_config")
def default_dry_runs(folder):
    """The dry runs of test_dry_run_default_config: target `lemmas`, then the default target."""
    wd = make_workdir(folder / "wd", ROOT / "config")
    return (snakemake(wd, "--dry-run", "--forceall", "lemmas"),
            snakemake(wd, "--dry-run", "--forceall"))


@pytest.mark.e2e
def test_dry_run_default_config(request):
    proc, whole = default_dry_runs.result(request)  # run ahead
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
    full = _job_counts(whole.stdout)
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


#: Lemmas config edits refused at start-up, with what the refusal says.
BAD_LEMMAS_CONFIGS = [
    (lambda c: c["corpora"].update({"bible-lemmas": dict(c["corpora"]["bible"])}),
     "corpora.bible-lemmas: the suffix '-lemmas' is reserved"),
    (lambda c: c["lemmas"].update(neural_languages=["kor"]),
     "field 'lemmas.neural_languages': 'kor' is not lemmatized"),
    (lambda c: c["lemmas"].update(corpora=["udhr"]),
     "'udhr' takes its models from 'bible', which is not lemmatized"),
    (lambda c: c["lemmas"].update(char_ngrams=True), "unknown key(s) ['char_ngrams']"),
]


@ahead("test_bad_lemmas_config_is_reported")
def bad_lemmas_dry_runs(folder):
    """The dry run of each case of test_bad_lemmas_config_is_reported, by its message."""
    return config_edit_dry_runs(folder, BAD_LEMMAS_CONFIGS)


@pytest.mark.parametrize("edit, expected", BAD_LEMMAS_CONFIGS)
@pytest.mark.e2e
def test_bad_lemmas_config_is_reported(request, edit, expected):
    proc = bad_lemmas_dry_runs.result(request)[expected]  # run ahead
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
