"""The paired bootstrap of the answer's ranking, the near-duplicate rule, and the sentences and
captions that state them (issue 39: a fragile headline; same claim, different numbers)."""

import numpy as np
import polars as pl
import pytest

from fairppl.report.rankings import (
    NEAR_DUPLICATE_RHO,
    answer_order,
    answer_sentences,
    distinct_models,
    model_agreement,
    rank_uncertainty_sentences,
    rank_uncertainty_table,
    ranking_transfer,
    wide_table,
)
from fairppl.stats.bootstrap import (
    RANK_UNCERTAINTY_COLUMNS,
    BootstrapSettings,
    extreme_shares,
    language_rank_bootstrap,
    mean_rank_replicates,
    positions,
    resample_counts,
)

# 4 units x 3 languages (a, b, c); English characters per unit.
ENGLISH = np.array([10.0, 20.0, 10.0, 20.0])
BITS_M1 = np.array([[30.0, 20.0, 10.0],   # unit 0: a > b > c
                    [40.0, 60.0, 20.0],   # unit 1: b > a > c
                    [10.0, 20.0, 30.0],   # unit 2: c > b > a
                    [50.0, 30.0, 20.0]])  # unit 3: a > b > c
BITS_M2 = np.array([[20.0, 30.0, 10.0],   # b > a > c
                    [40.0, 20.0, 60.0],   # c > a > b
                    [30.0, 20.0, 10.0],   # a > b > c
                    [20.0, 40.0, 30.0]])  # b > c > a


def test_mean_ranks_of_hand_picked_draws():
    """Each replicate draws one unit four times: its ranking is that unit's ranking."""
    counts = 4.0 * np.eye(4)
    one = mean_rank_replicates(counts, BITS_M1[None], ENGLISH)
    assert one.tolist() == [[1, 2, 3], [2, 1, 3], [3, 2, 1], [1, 2, 3]]
    both = mean_rank_replicates(counts, np.stack([BITS_M1, BITS_M2]), ENGLISH)
    # unit 0: (1,2,3) and (2,1,3); unit 1: (2,1,3) and (2,3,1); unit 2: (3,2,1) and (1,2,3);
    # unit 3: (1,2,3) and (3,1,2).
    assert both.tolist() == [[1.5, 1.5, 3], [2, 2, 2], [2, 2, 2], [2, 1.5, 2.5]]
    assert positions(both).tolist() == [[1, 1, 3], [1, 1, 1], [1, 1, 1], [2, 1, 3]]
    hardest, easiest = extreme_shares(both)
    # Ties split: replicate 0 gives a and b 1/2 each as hardest; replicates 1-2 a third each.
    assert hardest.tolist() == pytest.approx([(0.5 + 1 / 3 + 1 / 3) / 4,
                                              (0.5 + 1 / 3 + 1 / 3 + 1) / 4, (2 / 3) / 4])
    assert easiest.tolist() == pytest.approx([(2 / 3) / 4, (2 / 3) / 4, (1 + 2 / 3 + 1) / 4])
    assert hardest.sum() == pytest.approx(1) and easiest.sum() == pytest.approx(1)


def _direct(bits_by_model, english, counts, level):
    """The same bootstrap by loops: per replicate, ratio of sums per model and language, rank,
    mean rank, position, and the extremes (ties split)."""
    n_rep, n_lang = counts.shape[0], bits_by_model[0].shape[1]
    places, hard, easy = [], np.zeros(n_lang), np.zeros(n_lang)
    for b in range(n_rep):
        mean = np.zeros(n_lang)
        for bits in bits_by_model:
            rates = [sum(counts[b, i] * bits[i, j] for i in range(len(english)))
                     / sum(counts[b, i] * english[i] for i in range(len(english)))
                     for j in range(n_lang)]
            ordered = sorted(range(n_lang), key=lambda j: (-rates[j], j))
            for rank, j in enumerate(ordered, start=1):
                mean[j] += rank / len(bits_by_model)
        places.append([1 + sum(mean[k] < mean[j] for k in range(n_lang)) for j in range(n_lang)])
        top = [j for j in range(n_lang) if mean[j] == mean.min()]
        bottom = [j for j in range(n_lang) if mean[j] == mean.max()]
        for j in top:
            hard[j] += 1 / len(top) / n_rep
        for j in bottom:
            easy[j] += 1 / len(bottom) / n_rep
    places = np.array(places)
    # Inverted-CDF percentile by hand: the smallest value whose share at or below is >= q.
    def pct(column, q):
        values = np.sort(column)
        return values[int(np.ceil(q * len(values))) - 1]
    tail = (1 - level) / 2
    low = [pct(places[:, j], tail) for j in range(n_lang)]
    high = [pct(places[:, j], 1 - tail) for j in range(n_lang)]
    return low, high, hard, easy


def test_bootstrap_matches_a_direct_computation_with_the_same_draws():
    settings = BootstrapSettings(replicates=200, seed=3, level=0.9)
    bits = np.stack([BITS_M1, BITS_M2])
    got = language_rank_bootstrap(bits, ENGLISH, settings)
    counts = resample_counts(4, 200, 3)
    low, high, hard, easy = _direct([BITS_M1, BITS_M2], ENGLISH, counts, 0.9)
    assert got["low"].tolist() == low and got["high"].tolist() == high
    assert got["hardest"] == pytest.approx(hard) and got["easiest"] == pytest.approx(easy)
    # On all units: M1 BPEC a 130/60, b 130/60, c 80/60 -> ranks a1 b2 c3 (tie in column
    # order); M2 a 110/60, b 110/60, c 110/60 -> a1 b2 c3: mean ranks 1, 2, 3.
    assert got["mean_rank"].tolist() == [1, 2, 3] and got["position"].tolist() == [1, 2, 3]


def test_draws_are_shared_by_every_model_and_language():
    """Two models that are the same ranking: every replicate's mean rank is integral (both
    models ranked on the same draws); with independent draws some would be halves."""
    settings = BootstrapSettings(replicates=300, seed=1)
    reps = mean_rank_replicates(resample_counts(4, 300, 1), np.stack([BITS_M1, BITS_M1]),
                                ENGLISH)
    assert np.all(reps == np.round(reps))
    got = language_rank_bootstrap(np.stack([BITS_M1, BITS_M1]), ENGLISH, settings)
    alone = language_rank_bootstrap(BITS_M1[None], ENGLISH, settings)
    assert got["hardest"].tolist() == pytest.approx(alone["hardest"].tolist())


def _rows(bpec: dict[str, tuple], labels=("kenlm-char-o5 / char", "kenlm-subword-o5 / bpe",
                                           "kenlm-subword-o5 / unigram"), n_units=200,
          corpus="bible", split="test"):
    out = []
    for lang, values in bpec.items():
        for label, value in zip(labels, values):
            model, tok = label.split(" / ")
            out.append(dict(corpus=corpus, language=lang, model=model, tokenizer=tok,
                            open_vocabulary=True, split=split, n_units=n_units, bpec=value,
                            bpec_ci_low=value - 0.01, bpec_ci_high=value + 0.01))
    return pl.DataFrame(out)


def test_near_duplicates_are_merged_at_the_named_rho():
    """Ten languages: one adjacent swap gives rho 1 - 6*2/990 = 0.988 (merged, >= 0.98); two
    swaps give 1 - 6*4/990 = 0.976 (kept)."""
    assert NEAR_DUPLICATE_RHO == 0.98
    base = list(range(10))
    one_swap = [1, 0] + base[2:]
    two_swaps = [1, 0, 3, 2] + base[4:]
    langs = [f"l{i}" for i in range(10)]
    labels = ["a / x", "b / x", "c / x"]
    rows = _rows({lang: (float(p), float(q), float(r)) for lang, p, q, r in
                  zip(langs, base, one_swap, two_swaps)}, labels)
    rows = rows.with_columns(label=pl.col("model") + " / " + pl.col("tokenizer"))
    kept, merged = distinct_models(rows, labels)
    assert kept == ["a / x", "c / x"]
    assert [(m, k) for m, k, _ in merged] == [("b / x", "a / x")]
    assert merged[0][2] == pytest.approx(1 - 12 / 990)
    # c against a is 0.976: kept. A lower threshold merges it too.
    kept, merged = distinct_models(rows, labels, threshold=0.97)
    assert kept == ["a / x"] and [m for m, _, _ in merged] == ["b / x", "c / x"]
    # b and c differ by one swap (rho 0.988): with b first, c is merged into it.
    kept, _ = distinct_models(rows, ["b / x", "c / x"])
    assert kept == ["b / x"]


def _scores(bits_by_label: dict[str, np.ndarray], languages=("a", "b", "c"), corpus="bible"):
    rows = []
    for label, bits in bits_by_label.items():
        model, tok = label.split(" / ")
        for i in range(bits.shape[0]):
            for j, lang in enumerate(languages):
                rows.append(dict(corpus=corpus, language=lang, model=model, tokenizer=tok,
                                 open_vocabulary=True, split="test", unit_id=f"u{i}",
                                 bits=float(bits[i, j])))
    return pl.DataFrame(rows)


def _table_from(scores: pl.DataFrame, english: pl.DataFrame) -> pl.DataFrame:
    """BPEC per (language, model) of per-unit scores, with n_units: the shape of models.csv."""
    return (scores.join(english, on=["corpus", "unit_id"])
            .group_by("corpus", "language", "model", "tokenizer", "open_vocabulary", "split")
            .agg(bpec=pl.col("bits").sum() / pl.col("n_english_chars").sum(),
                 n_units=pl.len()))


ENGLISH_TABLE = pl.DataFrame({"corpus": ["bible"] * 4, "unit_id": ["u0", "u1", "u2", "u3"],
                              "n_english_chars": ENGLISH.astype(int)})


def test_rank_uncertainty_table_drops_the_duplicate_and_reads_the_shared_units():
    """Three models, the third a copy of the first plus a constant (the same ranking, rho 1):
    the table averages two, on the 3 units every language has (u3 missing in c under M2)."""
    scores = _scores({"kenlm-char-o5 / char": BITS_M1, "kenlm-subword-o5 / bpe": BITS_M2,
                      "kenlm-subword-o5 / unigram": BITS_M1 + 1.0})
    bpu = _table_from(scores, ENGLISH_TABLE)
    settings = BootstrapSettings(replicates=150, seed=5)
    short = scores.filter(~((pl.col("unit_id") == "u3") & (pl.col("language") == "c")
                            & (pl.col("tokenizer") == "bpe")))
    table = rank_uncertainty_table(bpu, bpu, short, short, ENGLISH_TABLE, settings)
    assert table.columns == list(RANK_UNCERTAINTY_COLUMNS)
    assert table["units (count)"].to_list() == [3, 3, 3]
    assert set(table["models"]) == {"kenlm-char-o5 / char; kenlm-subword-o5 / bpe"}
    assert table["merged"][0].startswith("kenlm-subword-o5 / unigram (rho 1.000 with "
                                         "kenlm-char-o5 / char)")
    direct = language_rank_bootstrap(np.stack([BITS_M1[:3], BITS_M2[:3]]), ENGLISH[:3],
                                     settings)
    assert table["hardest (share of replicates)"].to_list() == pytest.approx(
        direct["hardest"].tolist())
    assert table["position low (1 = hardest)"].to_list() == direct["low"].tolist()
    assert table["mean rank (1 = hardest)"].to_list() == direct["mean_rank"].tolist()


def _ranks_table(shares_hard, shares_easy, low, high, languages=("a", "b", "c", "d"),
                 models="m1 / x; m2 / x"):
    n = len(languages)
    return pl.DataFrame({
        "corpus": ["bible"] * n, "split": ["test"] * n, "language": list(languages),
        "units (count)": [4751] * n, "languages (count)": [n] * n, "models": [models] * n,
        "merged": [""] * n, "mean rank (1 = hardest)": [1.0 + i for i in range(n)],
        "position (1 = hardest)": list(range(1, n + 1)), "position low (1 = hardest)": low,
        "position high (1 = hardest)": high, "hardest (share of replicates)": shares_hard,
        "easiest (share of replicates)": shares_easy, "level (fraction)": [0.95] * n,
        "replicates (count)": [1000] * n, "seed": [0] * n})


def test_sentences_single_out_or_say_they_cannot():
    names = {"a": "Polish", "b": "Bengali", "c": "German", "d": "Korean"}
    ranks = _ranks_table([0.41, 0.33, 0.26, 0.0], [0.0, 0.0, 0.0, 0.996],
                         [1, 1, 1, 4], [3, 3, 3, 4])
    [text] = rank_uncertainty_sentences(ranks, "bible", ["m1 / x", "m2 / x"],
                                        ["a", "b", "c", "d"], names.get)
    assert text.startswith("In a paired bootstrap of ranks over the 4,751 units every language "
                           "has under each of these models (1,000 replicates")
    assert ("the data cannot single out the hardest: Polish, Bengali or German each come first "
            "in at least 2.5% of the replicates, and no language is hardest in more than 41% "
            "(Polish 41%, Bengali 33%, German 26%)") in text
    assert ("Korean is easiest in >99% of the replicates (95% interval of its position by mean "
            "rank: 4 to 4 of 4)") in text
    # Another set of models than the answer's: nothing is said.
    assert rank_uncertainty_sentences(ranks, "bible", ["m1 / x"], ["a", "b", "c", "d"],
                                      names.get) == []
    assert rank_uncertainty_sentences(ranks, "udhr", ["m1 / x", "m2 / x"],
                                      ["a", "b", "c", "d"], names.get) == []


def test_answer_names_the_merged_model_and_averages_the_rest():
    """Six languages; bpe and unigram rank them alike (rho 1): the mean rank is over char and
    bpe only. Char ranks b1 c2 d3 e4 f5 a6, bpe a1 b2 f3 e4 d5 c6: means b 1.5, a 3.5, and
    c, d, e, f 4.0 (with unigram counted too, c would be alone last at 4.67)."""
    bpec = {"a": (1.0, 6.0, 6.1), "b": (6.0, 5.0, 5.1), "c": (5.0, 1.0, 1.1),
            "d": (4.0, 2.0, 2.1), "e": (3.0, 3.0, 3.1), "f": (2.0, 4.0, 4.1)}
    models = _rows(bpec)
    text = " ".join(answer_sentences(models, {}, "bible"))
    assert ("Near-duplicates are counted once in the mean rank: kenlm-subword-o5 / unigram ranks "
            "the languages as kenlm-subword-o5 / bpe does (Spearman's rho 1.000), at or above "
            "the 0.98 that marks a near-duplicate, so ranks are averaged over "
            "kenlm-char-o5 / char, kenlm-subword-o5 / bpe.") in text
    assert "Hardest by mean rank over these models: b (first under 1 of 2 models" in text
    # c, d, e and f tie at 4.0 for last: f is named, last by id, and the tie is said.
    assert "Easiest: f (last under none of them" in text
    assert ("c, d, e and f share the bottom mean rank (4.00); f is named above as the last of "
            "them by language id, not by the data.") in text
    assert answer_order(models, None, "bible") == ["b", "a", "c", "d", "e", "f"]


def test_wide_table_follows_the_answers_order():
    bpec = {"a": (1.0, 6.0, 6.1), "b": (6.0, 5.0, 5.1), "c": (5.0, 1.0, 1.1)}
    models = _rows(bpec)
    sheet = pl.DataFrame({"corpus": ["bible"] * 3, "language": ["a", "b", "c"],
                          "name": ["A", "B", "C"], "script": ["Latn"] * 3,
                          "iso639_3": ["a", "b", "c"]})
    order = answer_order(models, None, "bible")
    # char ranks b1 c2 a3; bpe (unigram merged) a1 b2 c3: means b 1.5, a 2, c 2.5.
    assert order == ["b", "a", "c"]
    assert wide_table(models, sheet, "bible", order=order)["id"].to_list() == ["b", "a", "c"]
    # Without an order: the reference model's BPEC, as before.
    assert wide_table(models, sheet, "bible")["id"].to_list() == ["b", "c", "a"]


def test_tables_show_the_adjusted_p_the_text_counts():
    from scipy.stats import false_discovery_control

    bpec = {f"l{i}": (float(i), float(i + (i % 2)), float((i * 7) % 6)) for i in range(6)}
    agree = model_agreement(_rows(bpec), "bible")
    raw = agree["p_value"].to_numpy()
    assert agree["p_adjusted"].to_numpy() == pytest.approx(
        false_discovery_control(raw, method="bh"))
    both = pl.concat([_rows(bpec), _rows(bpec, n_units=31, corpus="udhr", split="all")])
    transfer = ranking_transfer(both, "bible", "udhr")
    assert transfer["p_adjusted"].to_numpy() == pytest.approx(
        false_discovery_control(transfer["p_value"].to_numpy(), method="bh"))


def test_transfer_caveat_names_its_units_and_the_tables():
    """The answer reads bpu (4751 units); the Second domain table reads the common table (100
    units), where the Bible ranking differs: the caveat gives both, each with its units."""
    bible = {"a": (1.0, 1.5, 1.6), "b": (2.0, 2.5, 2.6), "c": (3.0, 3.5, 3.6),
             "d": (4.0, 4.5, 4.6), "e": (5.0, 5.5, 5.6)}
    flipped = {k: tuple(6.0 - x for x in v) for k, v in bible.items()}
    udhr = _rows(bible, n_units=31, corpus="udhr", split="all")
    bpu = pl.concat([_rows(bible, n_units=4751), udhr])
    common = pl.concat([_rows(flipped, n_units=100), udhr])
    text = " ".join(answer_sentences(common, {}, "bible", other_corpora=("udhr",), bpu=bpu))
    assert ("The bible ranking carries over to udhr under all 3 models of the answer") in text
    assert "ranking bible on 4751 test units and udhr on 31 units (all splits)." in text
    # There the Bible ranking is reversed: rho -1 (exact p 2/120 under each model), which is
    # no carrying over however small its p.
    assert ("On the common units of the Second domain table (bible on 100 test units and udhr "
            "on 31 units (all splits)): rho -1.00, every p >= 0.017.") in text


def test_no_language_reaches_the_first_place_often_enough():
    ranks = _ranks_table([0.02, 0.02, 0.01, 0.95], [0.0, 0.0, 0.0, 1.0],
                         [2, 2, 2, 1], [3, 3, 3, 4])
    ranks = ranks.with_columns(pl.Series("position low (1 = hardest)", [2, 2, 2, 2]))
    [text] = rank_uncertainty_sentences(ranks, "bible", ["m1 / x", "m2 / x"],
                                        ["a", "b", "c", "d"], str)
    assert ("the data cannot single out the hardest: no language comes first in 2.5% of the "
            "replicates or more, and none is hardest in more than 95% (d 95%, a 2%, b 2%)") in text


def test_answer_reads_the_table_bpu_table_writes():
    """End to end on per-unit scores: the table's models are the answer's distinct models, so
    the answer states the bootstrap; a table of other models is not used."""
    scores = _scores({"kenlm-char-o5 / char": BITS_M1, "kenlm-subword-o5 / bpe": BITS_M2,
                      "kenlm-subword-o5 / unigram": BITS_M1 + 1.0})
    bpu = _table_from(scores, ENGLISH_TABLE)
    settings = BootstrapSettings(replicates=100, seed=2)
    ranks = rank_uncertainty_table(bpu, bpu, scores, scores, ENGLISH_TABLE, settings)
    direct = language_rank_bootstrap(np.stack([BITS_M1, BITS_M2]), ENGLISH, settings)
    text = " ".join(answer_sentences(bpu, {}, "bible", bpu=bpu, ranks=ranks))
    assert ("In a paired bootstrap of ranks over the 4 units every language has under each of "
            "these models (100 replicates") in text
    top = ["a", "b", "c"][int(np.argmax(direct["hardest"]))]
    assert f"{top} {direct['hardest'].max():.0%}" in text or f"{top} is hardest in" in text
    other = ranks.with_columns(models=pl.lit("kenlm-char-o5 / char"))
    text = " ".join(answer_sentences(bpu, {}, "bible", bpu=bpu, ranks=other))
    assert "paired bootstrap of ranks" not in text
