"""fairppl.marginal.caching: the word-occurrence classes and microaverages on hand-made token
sequences (exact), documents from consecutive units, and on a tiny random Llama over a unigram
model trained here: per-token log-probabilities against HFTokenLM.logp, per-word losses summing
to the sequence's log-probability, and each mode's estimate against the api's ``wr``."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fairppl.marginal import caching
from fairppl.marginal.caching import Occurrence
from marginal_data import sentences, train_unigram

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_classes_of_hand_made_occurrences():
    words = ["a", "b", "a", "a", "b", "c", "a", "a"]
    tokens = [(1,), (2, 3), (1,), (4, 5), (6,), (7,), (4, 5), (1,)]
    assert caching.classify_occurrences(words, tokens) == [
        "first", "first", "same", "different", "different", "first", "same", "same"]
    # the same tokens under another word type do not count: classes are per type
    assert caching.classify_occurrences(["x", "y", "y"], [(1,), (1,), [1]]) == [
        "first", "first", "same"]
    with pytest.raises(ValueError, match="3 words but 2 token sequences"):
        caching.classify_occurrences(["a", "b", "a"], [(1,), (2,)])


def test_word_losses_and_microaverages_by_hand():
    starts = np.array([False, True, True, False, True])  # ids 1, 2 and 4 begin a word
    words = ["▁a", "▁b", "▁a", "▁a"]
    ids = [1, 3, 2, 4, 3, 1, 3]  # ▁a = (1, 3), ▁b = (2,), ▁a = (4, 3), ▁a = (1, 3)
    lp = np.log([0.5, 0.5, 0.25, 0.1, 0.2, 0.5, 0.8, 0.9])  # the last: the end token
    occ = caching.word_losses(words, ids, lp, starts)
    assert [o.cls for o in occ] == ["first", "first", "different", "same"]
    assert [o.n_tokens for o in occ] == [2, 1, 2, 2]
    assert [o.loss for o in occ] == pytest.approx(
        [math.log(4), math.log(4), math.log(50), -math.log(0.4)], abs=1e-12)
    assert caching.split_words(ids, starts, 4) == [(0, 2), (2, 3), (3, 5), (5, 7)]
    with pytest.raises(ValueError, match="4 word-initial tokens but the text 3"):
        caching.split_words(ids, starts, 3)

    rows = {(r["subset"], r["group"]): r for r in caching.caching_summary(
        occ + [Occurrence("same", 1, 1.0), Occurrence("first", 3, 2.0)])}
    assert rows["all", "first"]["n_occurrences"] == 3
    assert rows["all", "first"]["loss_nats_per_word"] == pytest.approx(
        (2 * math.log(4) + 2.0) / 3)
    assert rows["multi-token", "first"]["loss_nats_per_word"] == pytest.approx(
        (math.log(4) + 2.0) / 2)
    assert rows["all", "same"]["loss_nats_per_word"] == pytest.approx(
        (-math.log(0.4) + 1.0) / 2)
    assert rows["multi-token", "same"]["n_occurrences"] == 1
    assert rows["multi-token", "different"]["loss_nats_per_word"] == pytest.approx(math.log(50))
    empty = caching.caching_summary([Occurrence("first", 1, 1.0)])
    assert [r["n_occurrences"] for r in empty] == [1, 0, 0, 0, 0, 0]
    assert empty[1]["loss_nats_per_word"] is None


def test_documents_join_consecutive_units_that_fit():
    texts = ["a b", "c", "d e f", "g", "h i j k", "l", "m"]
    n_tokens = lambda text: len(text.split())  # noqa: E731
    assert caching.documents(texts, 3, 3, n_tokens, 4) == [
        (0, "a b c"), (2, "d e f g"), (4, "h i j k")]
    # starts 0 and 3; the first document would run into the second one's start
    assert caching.documents(texts, 2, 5, n_tokens, 9) == [(0, "a b c d e f"), (3, "g h i j k l m")]
    assert caching.documents(texts, 1, 1, n_tokens, 1) == []  # "a b" alone does not fit
    with pytest.raises(ValueError, match="n_documents=0"):
        caching.documents(texts, 0, 3, n_tokens, 4)


def test_mode_estimate_of_equal_and_unequal_weights():
    got = caching.mode_estimate(np.array([-3.0, -3.0]), np.array([-1.0, -1.0]))
    assert got == {"logp_nats": pytest.approx(-2.0), "log_weight_sd_nats": 0.0,
                   "ess": pytest.approx(2.0)}
    got = caching.mode_estimate(np.array([-1.0, -3.0]), np.array([-1.0, -1.0]))
    assert got["logp_nats"] == pytest.approx(math.log((1 + math.exp(-2)) / 2))
    assert got["log_weight_sd_nats"] == pytest.approx(math.sqrt(2.0))


# ---- a tiny random Llama over a unigram model ------------------------------------------------


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """(HFTokenLM of a tiny random Llama over the unigram pieces, its TokenVocab,
    UnigramModel)."""
    pytest.importorskip("torch")
    from fairppl.marginal.unigram import UnigramModel
    from fairppl.marginal.vocab import vocab_from_hf
    from fairppl.neural import NeuralConfig, build_model, special_ids_of
    from fairppl.tokenizers import vocab_size
    from fairppl.tokenizers.convert import to_hf_tokenizer
    from fairppl.tokenlm.lm_hf import HFTokenLM

    spm_file = train_unigram(tmp_path_factory.mktemp("caching_spm"))
    tok = to_hf_tokenizer(spm_file)
    special = special_ids_of(tok)
    cfg = NeuralConfig(d_model=16, n_layers=2, n_heads=2, d_ff=32, context=64, seed=3)
    model = build_model(cfg, vocab_size(tok), special["bos"], special["eos"], special["pad"])
    return HFTokenLM(model.eval(), tok), vocab_from_hf(tok), UnigramModel.from_file(spm_file)


TEXT = "und Gott sah das Licht und Gott sprach und das Licht war gut"


def test_per_word_losses_sum_to_the_lm_score(tiny):
    from fairppl.marginal.unigram import sample_document, units

    lm, vocab, uni = tiny
    words = units(uni, TEXT)
    got = sample_document(uni, TEXT, 12, np.random.default_rng(0), tau=8.0)
    seqs = list(dict.fromkeys(ids for ids, _, _ in got))
    assert len(seqs) > 3  # tau 8: a variety of tokenizations
    lps = lm.token_logps(seqs)
    assert [len(lp) for lp in lps] == [len(s) + 1 for s in seqs]  # the end token last
    starts = caching.word_starts(uni)
    classes = set()
    for ids, lp, want in zip(seqs, lps, lm.logp(seqs)):
        occ = caching.word_losses(words, ids, lp, starts)
        assert len(occ) == len(words) == 13
        assert -math.fsum(o.loss for o in occ) + lp[-1] == pytest.approx(want, abs=1e-4)
        spans = caching.split_words(ids, starts, len(words))
        assert [vocab.decode(ids[lo:hi]) for lo, hi in spans] == \
            [w.replace("▁", " ").encode() for w in words]
        classes |= {o.cls for o in occ}
    assert classes == {"first", "same", "different"}


def test_mode_estimates_match_the_api_wr_estimator(tiny):
    from fairppl.marginal import api
    from fairppl.marginal.lattice import viterbi
    from fairppl.marginal.unigram import lattice

    lm, vocab, uni = tiny
    default = viterbi(lattice(uni, TEXT))[0]
    res = caching.analyse_document(lm, uni, TEXT, 6, 8.0, lambda: np.random.default_rng(5),
                                   default)
    assert res["n_words"] == 13 and len(res["occurrences"]) == 6 * 13
    assert res["default"] == pytest.approx(lm.logp([default])[0], abs=1e-4)
    for mode in ("independent", "consistent"):
        rec = api.estimate(lm, vocab, TEXT, "wr", rng=np.random.default_rng(5),
                           default_ids=default, K=6, tau=8.0, unigram_model=uni, mode=mode)
        assert not rec["enumerated"]
        assert res[mode]["logp_nats"] == pytest.approx(rec["logp"], abs=1e-4)
    rows = caching.summary_rows([res, res])
    assert [r["group"] for r in rows] == list(caching.CLASSES) * 2 + [
        "default", "independent", "consistent"]
    est = rows[-2]
    assert est["n_words"] == 26 and est["logp_nats"] == pytest.approx(
        2 * res["independent"]["logp_nats"])
    assert est["ppl_per_word"] == pytest.approx(math.exp(-est["logp_nats"] / 26))
    assert set(rows[0]) == set(caching.SUMMARY_COLUMNS)


def test_a_document_past_the_window_is_skipped(tiny):
    lm, _, uni = tiny
    long = " ".join(sentences(12, seed=4))
    assert caching.analyse_document(lm, uni, long, 2, 1.0, lambda: np.random.default_rng(0),
                                    [1]) is None
    assert lm.max_length == 64 and lm.end_id is not None
    assert len(lm.token_logps([[5] * 63])[0]) == 64  # start + 63 inputs: fits
    with pytest.raises(ValueError, match=r"sequence 1 \(64 tokens\): 65 input positions .* 64"):
        lm.token_logps([[5], [5] * 64])


def test_caching_table_of_a_few_documents(tiny):
    lm, _, uni = tiny
    texts = sentences(9, seed=2, longest=6)
    table = caching.caching_table(lm, uni, texts, [f"u{i}" for i in range(9)],
                                  {"language": "deu", "model": "tiny"}, n_documents=3,
                                  verses=3, K=4, tau=4.0, seed=0)
    assert table.columns == ["language", "model", "K", "tau", "max_units_per_document",
                             "n_documents_skipped", *caching.SUMMARY_COLUMNS]
    assert table["n_documents"].to_list() == [3] * 9
    assert table["n_documents_skipped"].to_list() == [0] * 9
    n_words = sum(len(t.split()) for t in texts)  # three documents of three sentences
    assert table["n_words"].drop_nulls().to_list() == [n_words] * 3
    caching_rows = table.filter(analysis="caching", subset="all")
    assert caching_rows["n_occurrences"].sum() == 4 * n_words  # every occurrence, K samples
    again = caching.caching_table(lm, uni, texts, [f"u{i}" for i in range(9)],
                                  {"language": "deu", "model": "tiny"}, n_documents=3,
                                  verses=3, K=4, tau=4.0, seed=0)
    assert again.equals(table)  # seeded per document


def test_the_script_writes_one_csv(tiny, tmp_path, root):
    """workflow/scripts/marginal_caching.py on the tiny model saved as a folder."""
    import runpy
    from types import SimpleNamespace

    import polars as pl

    lm, _, uni = tiny
    lm.model.save_pretrained(tmp_path / "model")
    from fairppl.tokenizers.convert import to_hf_tokenizer
    to_hf_tokenizer(uni.source).save_pretrained(tmp_path / "model")
    texts = sentences(6, seed=5, longest=5)
    pl.DataFrame({"unit_id": [f"v{i}" for i in range(6)], "position": list(range(6)),
                  "language": "deu", "split": "test", "text": texts}) \
        .write_parquet(tmp_path / "units.parquet")
    smk = SimpleNamespace(
        input=SimpleNamespace(model=str(tmp_path / "model"), tokenizer=uni.source,
                              units=str(tmp_path / "units.parquet")),
        output=SimpleNamespace(csv=str(tmp_path / "caching.csv")), log=[str(tmp_path / "log")],
        threads=1, wildcards=SimpleNamespace(corpus="bible", language="deu",
                                             tokenizer="spm-unigram-320"),
        params=SimpleNamespace(split="test", n_documents=2, verses=3, K=3, tau=1.0, seed=0,
                               fill=0.85))
    runpy.run_path(str(root / "workflow" / "scripts" / "marginal_caching.py"))["main"](smk)
    table = pl.read_csv(tmp_path / "caching.csv")
    assert table.height == 9 and set(table["language"]) == {"deu"}
    assert table.filter(analysis="estimate")["n_words"].to_list() == \
        [sum(len(t.split()) for t in texts)] * 3
    assert set(table["n_documents"]) == {2} and set(table["n_documents_skipped"]) == {0}
