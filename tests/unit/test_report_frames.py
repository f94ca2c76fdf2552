"""The report's reshaping apart from its prose and HTML (fairppl.report.frames): each section's
rows on small hand-built tables, checked cell by cell against hand counts and closed forms."""

from __future__ import annotations

from itertools import permutations

import polars as pl
import pytest

from fairppl.corpus.align import DROPPED_SCHEMA
from fairppl.report import frames
from fairppl.report.rankings import wide_table

CHAR, TRANS, WORD = ("kenlm-char-o5", "char"), ("transformer", "char"), ("awd", "char")
SHEET = pl.DataFrame({"corpus": ["bible"] * 4, "language": ["eng", "deu", "kor", "tur"],
                      "name": ["English", "German", "Korean", "Turkish"],
                      "script": ["Latn", "Latn", "Kore", "Latn"]})


def _row(model, language, bpec, corpus="bible", n_units=200, split="test", **extra):
    return {"corpus": corpus, "language": language, "model": model[0], "tokenizer": model[1],
            "open_vocabulary": True, "split": split, "n_units": n_units, "bpec": bpec,
            "bpec_ci_low": None if bpec is None else bpec - 0.1,
            "bpec_ci_high": None if bpec is None else bpec + 0.1,
            "bits_per_utterance": None if bpec is None else 100 * bpec,
            "bpu_ci_low": None if bpec is None else 100 * bpec - 5,
            "bpu_ci_high": None if bpec is None else 100 * bpec + 5} | extra


def _table(rows):
    return pl.DataFrame(rows, infer_schema_length=None)


#: Two models that disagree on deu and kor: the char n-gram ranks kor over deu, the transformer
#: deu over kor; their mean rank ties the two (1.5), broken by language id.
RANKED = _table([_row(CHAR, "eng", 1.0), _row(CHAR, "deu", 2.0), _row(CHAR, "kor", 3.0),
                 _row(TRANS, "eng", 1.2), _row(TRANS, "deu", 3.5), _row(TRANS, "kor", 2.0)])


def test_unit_sizes_are_the_distinct_counts_and_splits():
    models = _table([_row(CHAR, "eng", 1.0, n_units=31), _row(TRANS, "eng", 1.0, n_units=20),
                     _row(CHAR, "deu", 1.0, n_units=31, split="all"),
                     _row(CHAR, "eng", 1.0, corpus="nt", n_units=5)])
    assert frames.unit_sizes(models, "bible") == ([20, 31], ["all", "test"])
    assert frames.unit_sizes(models, "nt") == ([5], ["test"])


def test_own_unit_groups_most_units_first_labels_by_name():
    bpu = _table([_row(TRANS, "eng", 1.0, n_units=300), _row(CHAR, "eng", 1.0, n_units=300),
                  _row(CHAR, "deu", 1.0, n_units=300), _row(WORD, "eng", 1.0, n_units=100),
                  # no BPEC, or closed vocabulary: not among the open-vocabulary models
                  _row(("gpt", "bpe"), "eng", None, n_units=999),
                  _row(("kenlm-word-o3", "w"), "eng", 1.0, n_units=500)
                  | {"open_vocabulary": False}])
    groups = frames.own_unit_groups(bpu, "bible")
    assert groups.rows() == [(300, "test", ["kenlm-char-o5 / char", "transformer / char"]),
                             (100, "test", ["awd / char"])]


def test_answer_table_follows_the_mean_rank_not_the_reference():
    table = frames.answer_table(RANKED, RANKED, SHEET, "bible")
    assert table["id"].to_list() == ["deu", "kor", "eng"]
    assert table["rank"].to_list() == [1, 2, 3]
    assert table.row(0, named=True) == {
        "rank": 1, "language": "German", "script": "Latn", "id": "deu",
        "kenlm-char-o5 / char": "2.00 [1.90, 2.10]", "transformer / char": "3.50 [3.40, 3.60]"}
    # the reference model's own order puts kor first: the order above is the answer's
    assert wide_table(RANKED, SHEET, "bible")["id"].to_list() == ["kor", "deu", "eng"]


def test_rate_tables_one_table_per_rate_in_the_answer_order():
    tables = frames.rate_tables(RANKED, RANKED, SHEET, "bible",
                                {"bits_per_utterance": "", "bpec": ""})
    assert list(tables) == ["bits_per_utterance", "bpec"]
    bpu = tables["bits_per_utterance"]
    assert bpu["id"].to_list() == ["deu", "kor", "eng"]
    assert bpu["transformer / char"].to_list() == ["350 [345, 355]", "200 [195, 205]",
                                                   "120 [115, 125]"]
    assert tables["bpec"].equals(frames.answer_table(RANKED, RANKED, SHEET, "bible"))
    assert frames.rate_tables(RANKED, RANKED, SHEET, "nt", ["bpec"]) == {}


def _exact_p(n: int, rho: float) -> float:
    """Two-sided p of Spearman's rho over ``n`` distinct ranks, by counting permutations."""
    def r(perm):
        return 1 - 6 * sum((i - p) ** 2 for i, p in enumerate(perm)) / (n * (n * n - 1))
    perms = list(permutations(range(n)))
    return sum(abs(r(p)) >= abs(rho) - 1e-12 for p in perms) / len(perms)


def test_ranked_agreement_leaves_out_pairs_without_rho():
    bpu = _table([_row(CHAR, "eng", 1.0), _row(CHAR, "deu", 2.0), _row(CHAR, "kor", 3.0),
                  _row(CHAR, "tur", 4.0), _row(TRANS, "eng", 1.2), _row(TRANS, "deu", 3.5),
                  _row(TRANS, "kor", 2.0), _row(TRANS, "tur", 4.5),
                  _row(WORD, "eng", 1.0), _row(WORD, "deu", 2.0)])  # awd: 2 languages only
    agree = frames.ranked_agreement(bpu, "bible")
    assert agree.select("model_a", "model_b", "n_languages").rows() == [
        ("kenlm-char-o5 / char", "transformer / char", 4)]
    # ranks 1 2 3 4 against 1 3 2 4: sum d^2 = 2, rho = 1 - 6 * 2 / (4 * 15)
    assert agree["spearman_rho"][0] == pytest.approx(0.8)
    assert agree["p_value"][0] == pytest.approx(_exact_p(4, 0.8)) == pytest.approx(1 / 3)


def test_second_domain_values_and_tables():
    nt = [_row(CHAR, "eng", 1.0, corpus="nt", n_units=31, train_corpus="bible",
               common_set_languages="3 of 4 languages; left out by common_min_share: tur 12"),
          _row(CHAR, "deu", 3.0, corpus="nt", n_units=31, train_corpus="bible",
               common_set_languages=""),
          _row(CHAR, "kor", 2.0, corpus="nt", n_units=40, train_corpus=None,
               common_set_languages="3 of 4 languages")]
    models = _table([r | {"train_corpus": None, "common_set_languages": None}
                     for r in RANKED.to_dicts()] + nt)
    domain = frames.second_domain(models, SHEET, "bible", "nt")
    assert domain.train_corpora == ["bible"]
    assert domain.most_units == 40
    assert domain.left_out == ["3 of 4 languages; left out by common_min_share: tur 12"]
    assert domain.table["id"].to_list() == ["deu", "kor", "eng"]
    assert domain.table["kenlm-char-o5 / char"].to_list() == ["3.00 [2.90, 3.10]",
                                                             "2.00 [1.90, 2.10]",
                                                             "1.00 [0.900, 1.10]"]
    # the transformer has no nt rows; the char n-gram ranks 1 2 3 on bible, 1 3 2 on nt
    assert domain.transfer.select("model", "n_languages").rows() == [("kenlm-char-o5 / char", 3)]
    assert domain.transfer["spearman_rho"][0] == pytest.approx(0.5)
    assert frames.second_domain(models, SHEET, "bible", "udhr") is None
    bare = frames.second_domain(RANKED, SHEET, "bible", "bible")
    assert (bare.train_corpora, bare.left_out, bare.most_units) == ([], [], 200)


def _closed(language, tokenizer, vocab, oov, bits, corrected, n_units=10):
    return {"corpus": "bible", "language": language, "model": "kenlm-word-o3",
            "tokenizer": tokenizer, "open_vocabulary": False, "split": "test",
            "n_units": n_units, "vocab_size": vocab, "n_tokens": 1000, "oov_rate": oov,
            "ppl_naive": 30.0, "ppl_unk_corrected": 40.0, "bits_per_utterance": bits,
            "bits_unk_corrected": corrected, "bpec": None}


def test_unk_wide_one_row_per_word_model_and_language():
    char = [{"corpus": "bible", "language": lang, "model": "kenlm-char-o5", "tokenizer": "char",
             "open_vocabulary": True, "split": "test", "n_units": 10, "vocab_size": None,
             "n_tokens": 1000, "oov_rate": None, "ppl_naive": None, "ppl_unk_corrected": None,
             "bits_per_utterance": bits, "bits_unk_corrected": None, "bpec": 1.0}
            for lang, bits in (("eng", 300.0), ("deu", 320.0))]
    bpu = _table(char + [_closed("eng", "w100", 100, 0.2, 50.0, 900.0),
                         _closed("eng", "w200", 200, 0.1, 60.0, 800.0),
                         _closed("deu", "w100", 100, 0.3, 55.0, 1000.0),
                         _closed("deu", "w200", 200, 0.15, 65.0, 850.0)])
    wide, constant = frames.unk_wide(bpu)
    assert constant == {"corpus": "bible", "model": "kenlm-word-o3"}
    assert wide.columns == ["language", "kenlm-char-o5 (open vocabulary)",
                            "w100: OOV rate", "w100: naive", "w100: corrected",
                            "w200: OOV rate", "w200: naive", "w200: corrected"]
    # corrected = bits_unk_corrected / n_units
    assert wide.rows() == [("deu", 320.0, 0.3, 55.0, 100.0, 0.15, 65.0, 85.0),
                           ("eng", 300.0, 0.2, 50.0, 90.0, 0.1, 60.0, 80.0)]
    assert frames.unk_wide(_table(char)) is None


def test_correlates_table_hardest_first_by_the_char_ngram():
    models = _table([_row(WORD, "eng", 9.0), _row(WORD, "deu", 1.0),  # 'awd' sorts first
                     _row(CHAR, "eng", 1.0), _row(CHAR, "deu", 3.0), _row(CHAR, "kor", 2.0)])
    correlates = pl.DataFrame({"corpus": ["bible"] * 4 + ["nt"],
                               "language": ["eng", "deu", "kor", "tur", "eng"],
                               "feature_units": [4751] * 5,
                               "type_token_ratio": [0.1, 0.2, 0.3, 0.4, 0.5]})
    table, constant, ref = frames.correlates_table(correlates, models, SHEET, "bible")
    assert ref == "kenlm-char-o5 / char"
    assert constant == {"feature_units": 4751}
    assert table.columns == ["language", "type_token_ratio", "bpec", "script"]
    assert table.rows() == [("deu", 0.2, 3.0, "Latn"), ("kor", 0.3, 2.0, "Kore"),
                            ("eng", 0.1, 1.0, "Latn"), ("tur", 0.4, None, "Latn")]
    table, constant, ref = frames.correlates_table(correlates, models, SHEET, "nt")
    assert ref is None and table.columns == ["language", "feature_units", "type_token_ratio",
                                             "script"]


def test_correlation_cells_one_column_per_model():
    correlations = pl.DataFrame({
        "corpus": ["bible"] * 4 + ["nt"], "model": ["m", "m", "t", "t", "m"],
        "tokenizer": ["char"] * 5, "feature": ["ttr", "oov", "ttr", "oov", "ttr"],
        "spearman_rho": [0.5, None, -0.8, 1.0, 0.1], "p_value": [0.6667, None, 0.3333, 0.0, 0.9],
        "n_languages": [3, 2, 4, 4, 3]})
    cells = frames.correlation_cells(correlations, "bible")
    assert cells.rows() == [("ttr", "0.50 (p 0.667, n 3)", "-0.80 (p 0.333, n 4)"),
                            ("oov", "", "1.00 (p 0, n 4)")]
    assert cells.columns == ["feature", "m / char", "t / char"]


def test_unit_counts_table_and_kept_units():
    counts = pl.DataFrame({"corpus": ["nt", "nt", "udhr"], "split": ["test", "train", "all"],
                           "n_units": [10, 40, 31], "fewest (count)": [2, 9, 31],
                           "most (count)": [10, 40, 31]})
    table, same = frames.unit_counts_table(counts)
    assert not same and table.equals(counts)
    equal = counts.with_columns(pl.col("most (count)").alias("fewest (count)"))
    table, same = frames.unit_counts_table(equal)
    assert same and table.columns == ["corpus", "split", "n_units"]
    assert frames.unit_counts_table(counts.select("corpus", "n_units"))[1] is True
    assert frames.kept_units(counts) == {"nt": 50, "udhr": 31}


def _dropped(rows, dropped_in=None):
    table = pl.DataFrame({"corpus": ["nt"] * len(rows), "position": [r[0] for r in rows],
                          "unit_id": [f"u{r[0]}" for r in rows],
                          "translation": [r[1] for r in rows], "reason": [r[2] for r in rows],
                          "how": [r[3] for r in rows], "detail": [""] * len(rows)},
                         schema=DROPPED_SCHEMA)
    return table if dropped_in is None else table.with_columns(
        dropped_in=pl.Series(dropped_in, dtype=pl.Utf8))


def test_own_drops_count_each_unit_once_per_language():
    part = _dropped([(3, "k", "placeholder", "missing"), (5, "g", "empty", "no book"),
                     (6, "g", "empty", "no book"), (7, "p", "placeholder", "previous"),
                     (7, "g", "host", "marker"), (8, "x", "empty", "unknown")],
                    ["every language", "gla", "gla", "pot,gla", "gla", ""])
    assert frames.dropped_units_mode(part) == "own"
    every, own = frames.own_drops(part)
    # gla: 5 and 6 (no book) and 7 (two rows, one unit); pot: 7; unit 8 drops nowhere
    assert every == 1
    assert own.rows() == [("gla", 3, 2), ("pot", 1, 0)]


def test_drops_per_translation_and_source_languages():
    part = _dropped([(13, "t", "host", "marker"), (14, "t", "placeholder", "previous"),
                     (14, "b", "placeholder", "unknown"), (20, "b", "placeholder", "unknown"),
                     (21, "b", "host", "length"), (30, "j", "placeholder", "missing")])
    assert frames.dropped_units_mode(part) == "shared"
    assert frames.dropped_units_mode(part.with_columns(dropped_in=pl.lit("every language"))) \
        == "shared"
    assert frames.drops_per_translation(part).rows() == [("b", 2, 0, 1), ("j", 1, 0, 0),
                                                         ("t", 1, 1, 0)]
    sheet = pl.DataFrame({"corpus": ["nt", "nt", "nt", "bible"], "source_id": [7, 7, 9, 7],
                          "language": ["tur", "aze", "deu", "eng"]})
    assert frames.source_languages(sheet, "nt") == {"7": "tur", "9": "deu"}
    assert frames.source_languages(sheet.drop("source_id"), "nt") == {}


def test_corpus_types_only_of_mapped_corpora():
    settings = {"corpora": {"bible": {"type": "bible"}, "udhr": {}, "nt": None, "x": "text"}}
    assert frames.corpus_types(settings) == {"bible": "bible", "udhr": ""}
    assert frames.corpus_types({}) == {}
