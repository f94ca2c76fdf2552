"""fairppl.marginal.exact: enumeration of every tokenization against naive full-sequence scores
(tiny random Llama, real SmolLM2, KenLM), each prefix scored once, and the n-gram forward
algorithm against brute force and the study's own default-path score."""

from __future__ import annotations

import math
import os
import time
from pathlib import Path

import numpy as np
import pytest
from scipy.special import logsumexp

torch = pytest.importorskip("torch")

from fairppl.marginal import exact  # noqa: E402
from fairppl.marginal.lattice import Lattice, count_paths, enumerate_paths  # noqa: E402
from fairppl.tokenlm.lm_hf import HFTokenLM  # noqa: E402
from fairppl.tokenlm.lm_kenlm import KenLMTokenLM  # noqa: E402
from marginal_data import sentences, train_unigram  # noqa: E402
from fairppl.marginal.vocab import vocab_from_hf, vocab_from_sentencepiece  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SMOLLM2 = ROOT / "resources" / "models" / "smollm2-135m" / "hf"
STUDY_SPM = ROOT / "results" / "tokenizers" / "bible" / "deu" / "spm-unigram-4000.model"
STUDY_NGRAM = ROOT / "results" / "ngram" / "bible" / "deu" / "spm-unigram-4000.o5.kenlm"

@pytest.fixture(scope="module")
def spm_file(tmp_path_factory) -> str:
    return train_unigram(tmp_path_factory.mktemp("exact_spm"))


@pytest.fixture(scope="module")
def tiny(spm_file):
    """A tiny random Llama (fixed seed) over the unigram model's pieces, as a TokenLM."""
    from fairppl.neural import NeuralConfig, build_model, special_ids_of
    from fairppl.tokenizers import vocab_size
    from fairppl.tokenizers.convert import to_hf_tokenizer

    tok = to_hf_tokenizer(spm_file)
    special = special_ids_of(tok)
    cfg = NeuralConfig(d_model=16, n_layers=2, n_heads=2, d_ff=32, context=64, seed=7)
    model = build_model(cfg, vocab_size(tok), special["bos"], special["eos"], special["pad"])
    vocab = vocab_from_sentencepiece(spm_file)
    assert len(vocab) == vocab_size(tok)
    return model.eval(), tok, vocab


class Recording:
    """A TokenLM proxy that records every prefix passed to logp_next_many."""

    def __init__(self, lm):
        self.lm, self.prefixes = lm, []
        self.start_id, self.end_id = lm.start_id, lm.end_id

    def logp_next_many(self, prefixes, conts):
        self.prefixes += [tuple(p) for p in prefixes]
        return self.lm.logp_next_many(prefixes, conts)


def _naive(lm, vocab, text):
    paths = enumerate_paths(vocab.lattice(vocab.text_bytes(text)), 100_000)
    return paths, lm.logp(paths)


@pytest.mark.parametrize("text", ["Gott", "sah é", "ja und", ""])
def test_enumeration_equals_naive_sum(tiny, text):
    model, tok, vocab = tiny
    lm = HFTokenLM(model, tok)
    got = exact.enumerate_marginal(lm, vocab, text, default=tok.encode(text))
    paths, naive = _naive(HFTokenLM(model, tok), vocab, text)
    assert got.n_tokenizations == len(paths) == len(got.paths)
    assert sorted(got.paths) == sorted(paths)
    order = [got.paths.index(p) for p in paths]
    np.testing.assert_allclose(got.path_logp[order], naive, atol=2e-4, rtol=0)
    assert got.logp == pytest.approx(float(logsumexp(naive)), abs=2e-4)
    assert got.logp_default == pytest.approx(naive[paths.index(tuple(tok.encode(text)))],
                                             abs=2e-4)
    assert got.logp >= got.logp_default


def test_each_prefix_is_scored_once(tiny):
    model, tok, vocab = tiny
    text = "Erde sah"
    # tree attention: one model position per trie node, nothing else
    lm = HFTokenLM(model, tok)
    tree = exact.enumerate_marginal(lm, vocab, text, method="tree")
    assert tree.n_tokenizations > 100
    # every proper prefix of every tokenization (the empty one included) and every complete
    # tokenization (scored for its end token)
    distinct = {p[:k] for p in tree.paths for k in range(len(p))} | set(tree.paths)
    assert lm.positions == len(distinct) == tree.n_prefixes
    naive = HFTokenLM(model, tok, share="cache")  # one full forward per distinct path
    naive.logp(tree.paths)
    assert naive.positions == sum(len(p) + 1 for p in tree.paths) > 3 * lm.positions
    # one logp_next_many request per depth: each distinct prefix requested exactly once
    rec = Recording(HFTokenLM(model, tok, share="cache"))
    depth = exact.enumerate_marginal(rec, vocab, text)
    assert len(rec.prefixes) == len(set(rec.prefixes)) == len(distinct)
    assert depth.paths == tree.paths
    np.testing.assert_allclose(depth.path_logp, tree.path_logp, atol=2e-4, rtol=0)
    # ... and the cache-sharing LM runs each requested prefix (after the start token) once
    assert rec.lm.positions == sum(len(p) + 1 for p in rec.prefixes)


def test_enumeration_refuses_long_texts_and_wrong_defaults(tiny):
    model, tok, vocab = tiny
    lm = HFTokenLM(model, tok)
    n = count_paths(vocab.lattice(vocab.text_bytes("Wasser")))
    with pytest.raises(ValueError, match=rf"'Wasser': {n} tokenizations of 7 bytes exceed "
                                         rf"max_paths=10"):
        exact.enumerate_marginal(lm, vocab, "Wasser", max_paths=10)
    with pytest.raises(ValueError, match="does not spell"):
        exact.enumerate_marginal(lm, vocab, "ja", default=tok.encode("nein"))


@pytest.mark.pretrained
@pytest.mark.skipif(not (SMOLLM2 / "model.safetensors").exists(),
                    reason=f"SmolLM2 weights absent at {SMOLLM2} (make resources)")
def test_smollm2_enumeration_equals_naive_sum():
    from fairppl.lm.cache import load_lm

    model, tok = load_lm(SMOLLM2, device="cpu")
    vocab = vocab_from_hf(tok)
    text = "Gott sah"
    default = tuple(tok.encode(text, add_special_tokens=False))
    lm = HFTokenLM(model, tok)
    got = exact.enumerate_marginal(lm, vocab, text, default=default)
    paths, naive = _naive(HFTokenLM(model, tok), vocab, text)
    assert got.n_tokenizations == len(paths) > 20
    assert got.logp == pytest.approx(float(logsumexp(naive)), abs=1e-3)
    assert got.logp_default == pytest.approx(float(naive[paths.index(default)]), abs=1e-3)
    assert got.logp_default < got.logp


# ---------------------------------------------------------------------------------------------
# KenLM

@pytest.fixture(scope="module")
def piece_ngram(tmp_path_factory, resources_ready, spm_file):
    """An order-3 KenLM over the unigram model's default pieces, trained here."""
    from fairppl.ngram.kenlm_tool import train_model
    from fairppl.ngram.subword import load_sentencepiece, pieces

    work = tmp_path_factory.mktemp("exact_ngram")
    sp = load_sentencepiece(spm_file)
    text = work / "pieces.txt"
    text.write_text("".join(" ".join(pieces(sp, t)) + "\n" for t in sentences(300, seed=1)),
                    encoding="utf-8")
    binary = Path(os.environ["FAIRPPL_KENLM_BIN"])
    train_model(text, work / "m.kenlm", order=3, lmplz=binary / "lmplz",
                build_binary=binary / "build_binary", tmpdir=work / "tmp")
    return work / "m.kenlm", sp


def _id_to_word(sp) -> list[str | None]:
    return [None if sp.is_control(i) or sp.is_unknown(i) else sp.id_to_piece(i)
            for i in range(sp.get_piece_size())]


def _brute_ngram(model, words, paths) -> float:
    """log sum over paths of the sequence score from KenLM's own full_scores (nats)."""
    unk = math.log(len(words))
    totals = []
    for path in paths:
        scores = model.full_scores(" ".join(words[t] for t in path), bos=True, eos=True)
        totals.append(sum(lp * math.log(10.0) - (unk if oov else 0.0)
                          for lp, _, oov in scores))
    return float(logsumexp(totals))


def test_kenlm_states_hash_and_compare_by_context(piece_ngram):
    import kenlm

    from fairppl.ngram.kenlm_tool import load_model

    model = load_model(piece_ngram[0])
    a, b, c = kenlm.State(), kenlm.State(), kenlm.State()
    model.BeginSentenceWrite(a)
    model.BaseScore(a, "▁und", b)
    model.BaseScore(a, "▁und", c)
    assert b == c and hash(b) == hash(c) and b is not c and b != a and len({a, b, c}) == 2


@pytest.mark.parametrize("text", ["und ja", "Gott sah é", "x", "Erde ist"])
def test_ngram_forward_equals_brute_force_and_enumeration(piece_ngram, spm_file, text):
    from fairppl.ngram.kenlm_tool import load_model

    model_path, sp = piece_ngram
    model, vocab, words = load_model(model_path), vocab_from_sentencepiece(spm_file), \
        _id_to_word(sp)
    default = sp.encode(text)
    got = exact.ngram_marginal(model, vocab, text, words, default=default)
    paths = enumerate_paths(vocab.lattice(vocab.text_bytes(text)), 100_000)
    assert got.logp == pytest.approx(_brute_ngram(model, words, paths), abs=1e-9)
    enum = exact.enumerate_marginal(KenLMTokenLM(model, words), vocab, text, default=default)
    assert got.logp == pytest.approx(enum.logp, abs=1e-9)
    assert got.logp_default == pytest.approx(enum.logp_default, abs=1e-9)
    assert got.logp_default == pytest.approx(_brute_ngram(model, words, [default]), abs=1e-9)
    # the forward algorithm on the default path alone gives the default's score
    on_path = [(int(s), int(e), int(t), 0.0) for s, e, t in zip(*_path_arcs(vocab, default))]
    alone = exact.ngram_marginal(model, vocab, text, words,
                                 lattice=Lattice.from_arcs(len(vocab.text_bytes(text)), on_path))
    assert alone.logp == pytest.approx(got.logp_default, abs=1e-9)
    assert got.logp >= got.logp_default


def _path_arcs(vocab, path):
    ends = np.cumsum([len(vocab.token_bytes[t]) for t in path])
    return np.r_[0, ends[:-1]], ends, np.asarray(path)


def test_ngram_default_equals_study_subword_score(piece_ngram, spm_file):
    from fairppl.ngram.kenlm_tool import load_model
    from fairppl.ngram.subword import score_piece_units

    model_path, sp = piece_ngram
    texts = ["Gott sah das Licht über alles", "und x é Zürich", "der Tag"]
    ref = score_piece_units(model_path, spm_file, texts, progress=False)
    assert sum(r.n_unseen for r in ref) >= 2
    model, words = load_model(model_path), _id_to_word(sp)
    for text, r in zip(texts, ref):
        got = exact.ngram_path_logp(model, words, sp.encode(text))
        assert got == pytest.approx(-r.bits * math.log(2.0), abs=1e-9)


@pytest.mark.skipif(not (STUDY_NGRAM.exists() and STUDY_SPM.exists()),
                    reason=f"study artefacts {STUDY_NGRAM} / {STUDY_SPM} absent")
def test_ngram_marginal_of_a_full_verse_with_the_study_model():
    from fairppl.ngram.kenlm_tool import load_model
    from fairppl.ngram.subword import load_sentencepiece

    sp = load_sentencepiece(STUDY_SPM)
    model, vocab, words = load_model(STUDY_NGRAM), vocab_from_sentencepiece(STUDY_SPM), \
        _id_to_word(sp)
    verse = ("Und die Erde war wüst und leer, und es war finster auf der Tiefe; und der Geist "
             "Gottes schwebte auf dem Wasser. Und Gott sprach: Es werde Licht! Und es ward Licht.")
    start = time.perf_counter()
    got = exact.ngram_marginal(model, vocab, verse, words, default=sp.encode(verse))
    seconds = time.perf_counter() - start
    assert math.isfinite(got.logp) and got.logp_default < got.logp < 0
    assert got.n_states >= got.n_arcs // 10 and got.max_states > 1
    print(f"\nverse of {len(verse)} chars: {seconds:.2f} s, {got.n_states} merged states "
          f"(max {got.max_states} at one position), {got.n_arcs} arcs, log P = {got.logp:.3f} "
          f"nats, default {got.logp_default:.3f}")
    assert seconds < 30
