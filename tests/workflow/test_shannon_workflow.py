"""The Shannon game in the test study (rule `all` runs it: tests/config's shannon block, eng and
kor with every bettor), checked against independent computations: the word n-gram's likelihood
reference is the study's own naive word score of the same units, the eq. 7 bigram's exhaustive
gambling perplexity is its likelihood perplexity (exactly normalised bets), every token bettor
bets on an in-vocabulary word exactly its probability, and the campaign round trip (truncations,
bets from a model, score) gives back that model's likelihood perplexity."""

import json
import math
import subprocess

import polars as pl
import pytest

from conftest import VENV_BIN
from fairppl.shannon.gambling import MIN_INTERVAL_UNITS

pytestmark = pytest.mark.e2e


def _bets(wd, language, model, tokenizer):
    return pl.read_parquet(wd / "results" / "shannon" / "bible" / language
                           / f"{model}.{tokenizer}.parquet")


def test_every_bettor_plays_and_the_table_holds_every_protocol(study):
    wd, _ = study
    table = pl.read_csv(wd / "results" / "tables" / "shannon.csv", infer_schema_length=None)
    bettors = set(table.select("language", "model", "tokenizer").unique().iter_rows())
    words = {("kenlm-word-o3", "word-v100"), ("bigram-eq7", "word-v100"),
             ("transformer", "char"), ("transformer", "spm-unigram-3000")}
    expected = {(lang, m, t) for lang in ("eng", "kor") for m, t in words}
    expected.add(("eng", "tiny-random", "native"))  # pretrained bettors: eng only (default)
    assert bettors == expected
    assert set(table["protocol"]) == {"exhaustive", "randomized", "limited", "rank-bounds",
                                      "common"}
    assert set(table["m_outcomes"]) == {102}
    # lists of every outcome give the exhaustive perplexity (a shorter list can do better or
    # worse: the floor may exceed a poorly predicted word's own bet); the bettors' own lists
    # of a distribution that sums to 1 always pass the consistency check
    for (lang, model, tok), part in table.group_by(["language", "model", "tokenizer"]):
        full = part.filter((pl.col("protocol") == "exhaustive")
                           & (pl.col("n_t") == pl.col("n_truncations")))["perplexity_per_word"][0]
        limited = part.filter(pl.col("protocol") == "limited").sort("l")
        assert limited["perplexity_per_word"][-1] == pytest.approx(full, rel=1e-12)
        assert (limited["n_inconsistent"] == 0).all(), (lang, model)
        # Shannon's lower bound needs non-increasing rank frequencies (an ideal predictor): on
        # a few dozen truncations of a barely trained model they rise, and the row says so;
        # cut lists are never bounds; every row names its number of truncations
        bounds = part.filter(pl.col("protocol") == "rank-bounds")
        crossed = bounds.filter(pl.col("low_per_word") > pl.col("high_per_word"))
        assert not crossed["rank_bounds_valid"].any()
        assert crossed["rank_bounds_note"].str.contains("inverted").all()
        assert not bounds.filter(pl.col("l") < pl.col("m_outcomes"))["rank_bounds_valid"].any()
        n_truncations = part.filter(pl.col("protocol") == "exhaustive")["n_truncations"][0]
        assert (bounds["n_truncations"] == n_truncations).all()
        # every randomized row names its scheme; every fixed-set perplexity on enough units
        # has an interval
        drawn = part.filter((pl.col("protocol") == "randomized")
                            & pl.col("perplexity_per_word").is_not_null())
        assert set(drawn["scheme"]) <= {"systematic", "weighted"} and drawn.height
        fixed = part.filter(pl.col("protocol").is_in(["limited", "common"])
                            | ((pl.col("protocol") == "exhaustive") & pl.col("scheme").is_null()))
        with_units = fixed.filter(pl.col("n_units") >= MIN_INTERVAL_UNITS)
        assert with_units["ci_low_per_word"].is_not_null().all(), (lang, model)
        # fewer units than the campaign scorer's minimum: no interval, and the row says why
        few = fixed.filter(pl.col("n_units") < MIN_INTERVAL_UNITS)
        assert few["ci_low_per_word"].is_null().all(), (lang, model)
        assert few["ci_note"].str.starts_with("no interval").all(), (lang, model)
    # the units of a costlier bettor are among a cheaper one's (nested subsets)
    eng = {m: set(_bets(wd, "eng", m, t)["unit_id"]) for m, t in
           [("kenlm-word-o3", "word-v100"), ("transformer", "char"), ("tiny-random", "native")]}
    assert eng["tiny-random"] <= eng["transformer"] <= eng["kenlm-word-o3"]
    assert len(eng["transformer"]) == 3 and len(eng["tiny-random"]) == 2
    report = (wd / "results" / "report.html").read_text(encoding="utf-8")
    assert "The Shannon game" in report and "Le Monde" in report


def test_word_ngram_reference_is_the_studys_naive_word_score(study):
    wd, _ = study
    bets = _bets(wd, "eng", "kenlm-word-o3", "word-v100")
    scores = pl.read_parquet(wd / "results" / "scores" / "bible" / "eng"
                             / "kenlm-word-o3.word-v100.parquet")
    units = set(bets["unit_id"])
    assert units <= set(scores["unit_id"])
    same = scores.filter(pl.col("unit_id").is_in(sorted(units)))
    # the study's naive cost (bits, every word and </s>) against the bettor's log-probabilities
    assert same["n_tokens"].sum() == bets.height
    assert -bets["log_prob"].sum() / math.log(2) == pytest.approx(same["bits"].sum(), rel=1e-9)
    table = pl.read_csv(wd / "results" / "tables" / "shannon.csv", infer_schema_length=None)
    row = table.filter(language="eng", model="kenlm-word-o3", protocol="exhaustive",
                       n_t=bets.height).row(0, named=True)
    assert row["likelihood_perplexity_per_word"] == pytest.approx(
        2 ** (same["bits"].sum() / same["n_tokens"].sum()), rel=1e-9)


def test_bigram_gambling_equals_likelihood_and_token_bets_are_probabilities(study):
    wd, _ = study
    bigram = _bets(wd, "eng", "bigram-eq7", "word-v100")
    assert (bigram["log_bet"] - bigram["log_prob"]).abs().max() < 1e-12
    for model, tok in [("transformer", "char"), ("transformer", "spm-unigram-3000"),
                       ("tiny-random", "native")]:
        bets = _bets(wd, "eng", model, tok)
        known = bets.filter(pl.col("in_vocabulary"))
        assert known.height and (known["log_bet"] - known["log_prob"]).abs().max() < 1e-9
        # <unk> pools every other word: at least the actual out-of-vocabulary word's mass
        unknown = bets.filter(~pl.col("in_vocabulary"))
        assert (unknown["log_bet"] >= unknown["log_prob"] - 1e-9).all()


def _fairppl(wd, *args):
    return subprocess.run([str(VENV_BIN / "fairppl"), *args], cwd=wd, capture_output=True,
                          text=True, timeout=600)


def test_campaign_round_trip_gives_the_models_likelihood_perplexity(study, tmp_path):
    from fairppl.corpus.readers import read_split
    from fairppl.shannon.bigram import DiscountBigram
    from fairppl.shannon.campaign import read_campaign

    wd, _ = study
    folder = tmp_path / "campaign"
    proc = _fairppl(wd, "campaign", "truncations", "--corpus", "bible", "--language", "eng",
                    "--n", "4", "--out", str(folder))
    assert proc.returncode == 0, proc.stderr
    campaign = read_campaign(folder)
    alpha = _bets(wd, "eng", "bigram-eq7", "word-v100")["alpha"][0]
    out = tmp_path / "bigram.jsonl"
    proc = _fairppl(wd, "campaign", "bets", "--model", "bigram-eq7", str(folder),
                    "--alpha", str(alpha), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    proc = _fairppl(wd, "campaign", "score", str(folder), str(out), "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    scored = json.loads(proc.stdout)
    units = wd / "results" / "corpus" / "bible" / "units.parquet"
    train = read_split(str(units), "eng", "train")["text"].to_list()
    texts = read_split(str(units), "eng", "test")["text"].to_list()[:4]
    model = DiscountBigram.fit(train, campaign.outcomes, alpha)
    assert scored["n_scored"] == campaign_len(folder) and scored["n_flagged"] == 0
    assert scored["perplexity"] == pytest.approx(model.perplexity(texts), rel=1e-9)

    # the KenLM word n-gram's lists of 10 bets pass the check and cost more than its full list
    kenlm = wd / "results" / "ngram" / "bible" / "eng" / "word-v100.o3.kenlm"
    full, short = tmp_path / "full.jsonl", tmp_path / "short.jsonl"
    for path, length in ((full, "all"), (short, "10")):
        proc = _fairppl(wd, "campaign", "bets", "--model", str(kenlm), str(folder), "--l",
                        length, "--out", str(path))
        assert proc.returncode == 0, proc.stderr
    results = {}
    for path in (full, short):
        proc = _fairppl(wd, "campaign", "score", str(folder), str(path), "--json")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        results[path] = json.loads(proc.stdout)["perplexity"]
    assert results[short] > results[full]


def campaign_len(folder):
    return sum(1 for _ in open(folder / "truncations.jsonl", encoding="utf-8"))


def test_players_table_and_report_section_beside_the_study_models(study, tmp_path):
    """A scripted player's money bets (50 coins on every answer: perplexity exactly 2) beside the
    study's KenLM word trigram and eq. 7 bigram (`fairppl campaign models`), on the 5 truncations
    played: the rule shannon_players (config shannon.players) and the report's subsection."""
    import yaml

    from conftest import snakemake
    from fairppl.report.shannon import players_body
    from fairppl.shannon.campaign import read_campaign, read_submission, score_submission
    from fairppl.shannon.play import Game, PlaySettings

    wd, _ = study
    folder = tmp_path / "campaign"
    proc = _fairppl(wd, "campaign", "truncations", "--corpus", "bible", "--language", "eng",
                    "--n", "2", "--out", str(folder))
    assert proc.returncode == 0, proc.stderr
    proc = _fairppl(wd, "campaign", "models", str(folder), "--bettors", "kenlm-word,bigram")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(p.name for p in (folder / "models").glob("*.jsonl")) == [
        "bigram-eq7.jsonl", "kenlm-word-o3.jsonl"]
    campaign = read_campaign(folder)
    game = Game(campaign, "script", PlaySettings("money"), kind="scripted")
    played = campaign.ids[:5]
    for tid in played:
        word = game.answer(tid)["word"]
        game.bet({"id": tid, "stakes": [[word if word != "<unk>" else "zzzzq", 50]]})
    overlay = tmp_path / "players.yaml"
    overlay.write_text(yaml.safe_dump({"shannon": {"players": [
        {"campaign": str(folder), "player": "script", "protocol": "money"}]}}),
        encoding="utf-8")
    # the workdir's config, then the overlay (a relative path would be the process's cwd's)
    try:
        proc = snakemake(wd, "results/tables/shannon_players.csv", "--configfile",
                         str(wd / "config" / "config.yaml"), str(overlay))
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        table = pl.read_csv(wd / "results" / "tables" / "shannon_players.csv")
        rows = {r["predictor"]: r for r in table.iter_rows(named=True)}
        assert rows["script"]["perplexity_per_unit"] == pytest.approx(2.0, rel=1e-12)
        assert rows["script"]["player_kind"] == "scripted"
        sub = campaign.subset(played)
        for name in ("bigram-eq7", "kenlm-word-o3"):
            label = json.loads((folder / "models" / f"{name}.json").read_text())["label"]
            records, flags = read_submission(folder / "models" / f"{name}.jsonl", campaign,
                                             only=played)
            expected = score_submission(sub, records, flags)["perplexity"]
            assert rows[label]["perplexity_per_unit"] == pytest.approx(expected, rel=1e-12)
            assert rows[label]["n_truncations_played"] == 5
        html = players_body(table, {"eng": "English"})
        assert ("script (a scripted player, not a person) played 5 of "
                f"{len(campaign.ids)} truncations of English (money protocol") in html
        assert "<h3 id='shannon-players'>" in html and "`" not in html
        # the table prints each perplexity as the sentence does (one decimal)
        for value in table["perplexity_per_unit"].drop_nulls():
            assert html.count(f"{value:.1f}") >= 2
    finally:  # the shared study's tables stay those of rule `all` (the SLURM run compares them)
        (wd / "results" / "tables" / "shannon_players.csv").unlink(missing_ok=True)
