"""fairppl.marginal.beam: the beam lower bound against exact enumeration, under a peaky random
bigram TokenLM (mass spread over many tokenizations, exact float64) and a tiny random Llama: never
above the exact marginal, equal to it when the beam holds every partial path, growing with the
beam on these strings, and including the default tokenization's probability."""

from __future__ import annotations

import random

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fairppl.marginal.beam import beam_marginal  # noqa: E402
from fairppl.marginal.exact import enumerate_marginal  # noqa: E402
from fairppl.marginal.vocab import vocab_from_sentencepiece  # noqa: E402
from fairppl.tokenlm.lm_hf import HFTokenLM  # noqa: E402

WORDS = ("der die das und ist nicht ein eine mit von zu dem den Gott Himmel Erde Wasser sprach "
         "sah gut Licht Finsternis Tag Nacht schuf war Geist über alle").split()
TEXTS = ["Gott sah", "Erde ist", "über", "und é", "x"]
# float32 forwards with and without a key/value cache differ in the last digits
TOL = 2e-4


class PeakyBigram:
    """A TokenLM whose next-token log-probabilities depend on the previous token only: random
    (fixed seed) plus a cost of 5.6 nats per byte of the token, about ln(260), so that splits
    into short tokens compete with the default and the mass spreads over many tokenizations.
    Exact float64 arithmetic: enumeration and beam agree to rounding."""

    def __init__(self, vocab, seed: int = 0, end_id: int = 2):
        from scipy.special import log_softmax

        rng = np.random.default_rng(seed)
        size = len(vocab)
        nbytes = np.array([len(b) if b else 1 for b in vocab.token_bytes], dtype=np.float64)
        self.table = log_softmax(rng.normal(0.0, 1.0, (size + 1, size)) - 5.6 * nbytes, axis=1)
        self.start_id, self.end_id, self.calls, self.positions = size, end_id, 0, 0

    def logp_next_many(self, prefixes, conts_per_prefix):
        self.calls += 1
        out = []
        for prefix, conts in zip(prefixes, conts_per_prefix):
            values = []
            for cont in conts:
                prev, total = (prefix[-1] if len(prefix) else self.start_id), 0.0
                for t in cont:
                    total += self.table[prev, t]
                    prev = t
                    self.positions += 1
                values.append(total)
            out.append(np.array(values, dtype=np.float64))
        return out


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from fairppl.neural import NeuralConfig, build_model, special_ids_of
    from fairppl.tokenizers import train_sentencepiece, vocab_size
    from fairppl.tokenizers.convert import to_hf_tokenizer

    rng = random.Random(1)
    units = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))) for _ in range(300)]
    work = tmp_path_factory.mktemp("beam_spm")
    train_sentencepiece(units, "unigram", 320, str(work / "spm"), allow_reduction=True)
    tok = to_hf_tokenizer(str(work / "spm.model"))
    special = special_ids_of(tok)
    cfg = NeuralConfig(d_model=16, n_layers=2, n_heads=2, d_ff=32, context=64, seed=11)
    model = build_model(cfg, vocab_size(tok), special["bos"], special["eos"], special["pad"])
    return HFTokenLM(model.eval(), tok), tok, vocab_from_sentencepiece(str(work / "spm.model"))


@pytest.fixture(scope="module")
def exact(tiny):
    lm, tok, vocab = tiny
    toy = PeakyBigram(vocab)
    return {t: enumerate_marginal(toy, vocab, t, default=tok.encode(t)) for t in TEXTS}


@pytest.mark.parametrize("text", TEXTS)
def test_bound_grows_to_the_exact_marginal(tiny, exact, text):
    _, tok, vocab = tiny
    toy, truth = PeakyBigram(vocab), exact[text]
    previous = -np.inf
    for width in (1, 2, 3, 4, 8, 16, 64):
        got = beam_marginal(toy, vocab, text, beam=width)
        assert got.beam == width and 1 <= got.n_complete <= truth.n_tokenizations
        assert got.logp_lower <= truth.logp + 1e-9, width
        assert got.logp_lower >= previous, width
        previous = got.logp_lower
    # a beam as wide as the number of tokenizations keeps every partial path
    full = beam_marginal(toy, vocab, text, beam=truth.n_tokenizations)
    assert full.n_complete == truth.n_tokenizations
    assert full.logp_lower == pytest.approx(truth.logp, abs=1e-9)


def test_narrow_beams_miss_mass(tiny, exact):
    _, _, vocab = tiny
    truth = exact["Gott sah"]
    assert truth.n_tokenizations == 561
    # the mass is spread: the best single tokenization holds under a fifth of it
    assert truth.path_logp.max() < truth.logp - np.log(5)
    narrow = beam_marginal(PeakyBigram(vocab), vocab, "Gott sah", beam=1)
    assert narrow.logp_lower < truth.logp - 1.0 and narrow.n_complete < 20


@pytest.mark.parametrize("text", TEXTS)
def test_default_tokenization_is_included(tiny, exact, text):
    _, tok, vocab = tiny
    default = tok.encode(text)
    truth = exact[text].logp_default
    forced = beam_marginal(PeakyBigram(vocab), vocab, text, beam=1, default=default,
                           force_default=True)
    assert forced.logp_default == pytest.approx(truth, abs=1e-9)
    assert forced.logp_lower >= forced.logp_default
    for width in (1, 4, 16):
        got = beam_marginal(PeakyBigram(vocab), vocab, text, beam=width, default=default)
        if got.logp_default is not None:
            assert got.logp_default == pytest.approx(truth, abs=1e-9)
            assert got.logp_lower >= got.logp_default


def test_default_missed_by_a_narrow_beam_unless_forced(tiny):
    _, tok, vocab = tiny
    default = tok.encode("Gott sah")
    got = beam_marginal(PeakyBigram(vocab), vocab, "Gott sah", beam=1, default=default)
    assert got.logp_default is None
    forced = beam_marginal(PeakyBigram(vocab), vocab, "Gott sah", beam=1, default=default,
                           force_default=True)
    assert forced.logp_default is not None and forced.n_complete > got.n_complete


@pytest.mark.parametrize("text", ["über", "und é"])
def test_transformers_lm_full_beam_equals_tree_enumeration(tiny, text):
    lm, tok, vocab = tiny
    truth = enumerate_marginal(lm, vocab, text, method="tree")
    for width in (1, 2):
        assert beam_marginal(lm, vocab, text, beam=width).logp_lower <= truth.logp + TOL
    full = beam_marginal(lm, vocab, text, beam=truth.n_tokenizations)
    assert full.logp_lower == pytest.approx(truth.logp, abs=TOL)


def test_bad_arguments(tiny):
    lm, tok, vocab = tiny
    with pytest.raises(ValueError, match="beam=0: expected at least 1"):
        beam_marginal(lm, vocab, "ja", beam=0)
    with pytest.raises(ValueError, match="does not spell"):
        beam_marginal(lm, vocab, "ja", default=tok.encode("nein"))
