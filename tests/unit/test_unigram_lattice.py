"""fairppl.marginal.unigram against sentencepiece 0.2.1 itself (Viterbi, n-best, entropy, sample
scores) on a unigram model trained here and, when the study built it, the English Bible model;
the consistent per-type proposal checked exactly by enumeration."""

import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from fairppl.core.errors import InputError
from fairppl.marginal import unigram as U
from fairppl.marginal.lattice import (count_paths, entropy, enumerate_paths, nbest, path_logq,
                                      viterbi)
from fairppl.tokenizers.training import train_sentencepiece

spm = pytest.importorskip("sentencepiece")

ROOT = Path(__file__).resolve().parents[2]
BIBLE = ROOT / "results/tokenizers/bible/eng/spm-unigram-4000.model"
SYLLABLES = ["ka", "to", "ri", "an", "me", "lo", "su", "ne", "ba", "di", "er", "os"]
TEXTS = ["kato rime xé lo", "  two  spaces ", "karito anme suneba", "tokatoka to", "日本 ü!",
         "a", ""]


def training_sentences(seed=0, n=300):
    rng = np.random.default_rng(seed)
    words = ["".join(rng.choice(SYLLABLES, size=rng.integers(1, 4))) for _ in range(60)]
    return [" ".join(rng.choice(words, size=rng.integers(3, 9))) for _ in range(n)]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("spm") / "tiny"
    train_sentencepiece(training_sentences(), "unigram", 300, str(prefix))
    return str(prefix) + ".model"


def models(tiny):
    out = [tiny]
    if BIBLE.exists():
        out.append(str(BIBLE))
    return out


BIBLE_TEXTS = ["In the beginning God created the heaven and the earth.",
               "And God said, Let there be light: and there was light.",
               "Jesus wept; and the Pharisees (\u201cscribes\u201d) said: \u00abNo!\u00bb 42"]


def texts_for(model_file):
    return TEXTS + (BIBLE_TEXTS if "bible" in model_file else [])


def test_model_fields_and_normalisation(tiny):
    m = U.UnigramModel.from_file(tiny)
    assert m.add_dummy_prefix and m.byte_fallback and not m.remove_extra_whitespaces
    assert m.pieces[m.unk_id] == "<unk>" and len(m._byte_ids) == 256
    assert m.unk_score == float(np.float32(m.scores[m.types == 1].min() - 10.0))
    assert m.normalize(" a  b") == "\u2581\u2581a\u2581\u2581b" and m.normalize("") == ""
    assert U.text_bytes(m, "é b") == " é b".encode("utf-8")
    assert U.units(m, "ab  c ab") == ["\u2581ab", "\u2581", "\u2581c", "\u2581ab"]
    lat = U.lattice(m, "é")  # "▁" then é = C3 A9: not in the tiny vocabulary
    assert lat.n == 3
    chain = [(int(s), int(e), m.pieces[t], w) for s, e, t, w in
             zip(lat.start, lat.end, lat.token, lat.logw) if s >= 1]
    assert chain == [(1, 2, "<0xC3>", m.unk_score), (2, 3, "<0xA9>", 0.0)]


def test_refuses_bpe_model(tmp_path):
    train_sentencepiece(training_sentences(n=60), "bpe", 300, str(tmp_path / "bpe"))
    with pytest.raises(InputError, match=r"bpe\.model: model_type is 'bpe', expected a unigram"):
        U.UnigramModel.from_file(tmp_path / "bpe.model")


def test_viterbi_nbest_match_sentencepiece(tiny):
    for model_file in models(tiny):
        m = U.UnigramModel.from_file(model_file)
        sp = spm.SentencePieceProcessor(model_file=model_file)
        for text in texts_for(model_file):
            lat = U.lattice(m, text)
            assert lat.n == len(U.text_bytes(m, text))
            assert list(viterbi(lat)[0]) == sp.encode(text), (model_file, text)
            if not text:
                continue
            mine = nbest(lat, 12)
            proto = sp.nbest_encode(text, nbest_size=12, out_type="immutable_proto")
            theirs = [(tuple(p.id for p in nb.pieces), nb.score) for nb in proto.nbests]
            # quantised scores: float32 and float64 sums are exact, equal totals are equal
            assert [s for _, s in mine] == [s for _, s in theirs], (model_file, text)
            assert mine[0][0] == theirs[0][0]
            last = mine[-1][1]  # the order inside a tie is sentencepiece's heap order
            for score, group in itertools.groupby(mine, key=lambda x: x[1]):
                want = {p for p, s in theirs if s == score}
                if score != last or len(mine) == count_paths(lat):
                    assert {p for p, _ in group} == want, (model_file, text, score)


@pytest.mark.parametrize("alpha", [1.0, 0.5, 0.2])
def test_entropy_and_sample_scores_match_sentencepiece(tiny, alpha):
    spm.set_random_generator_seed(7)
    tau = 1.0 / alpha  # sentencepiece's alpha is the inverse temperature
    for model_file in models(tiny):
        m = U.UnigramModel.from_file(model_file)
        sp = spm.SentencePieceProcessor(model_file=model_file)
        for text in texts_for(model_file):
            if not text:
                continue
            lat = U.lattice(m, text)
            want = sp.calculate_entropy(text, alpha)  # float32 arithmetic inside
            # sentencepiece sums in float32: an entropy near 0 is a difference of terms of up to
            # ~50 nats, each rounded to 2^-24 of itself (~3e-6), so its absolute error reaches
            # ~1e-5 (measured: 0.0002330 against the exact 0.0002361 on "  two  spaces ")
            assert entropy(lat, tau) == pytest.approx(want, rel=1e-4, abs=1e-5), (text, alpha)
            for ids, score in sp.sample_encode_and_score(text, num_samples=6, alpha=alpha):
                assert path_logq(lat, tuple(ids), tau) == pytest.approx(score, abs=2e-4)


def test_wor_include_best_starts_with_encode(tiny):
    m = U.UnigramModel.from_file(tiny)
    sp = spm.SentencePieceProcessor(model_file=tiny)
    text = "karito anme suneba tokatoka"
    got = U.sample_document(m, text, 5, np.random.default_rng(0), tau=2.0, wor=True,
                            include_best=True)
    assert list(got[0][0]) == sp.encode(text) and got[0][2] == 0.0
    assert len({g[0] for g in got}) == 5 and all(g[2] <= 0.0 for g in got[1:])
    lat = U.lattice(m, text)
    for ids, logq, _ in got:
        assert logq == pytest.approx(path_logq(lat, ids, 2.0), abs=1e-12)
    with pytest.raises(ValueError, match="include_best needs wor=True"):
        U.sample_document(m, text, 5, np.random.default_rng(0), include_best=True)
    with pytest.raises(ValueError, match="mode 'both': expected one of independent, consistent"):
        U.sample_document(m, text, 5, np.random.default_rng(0), mode="both")


def consistent_truth(m, text, tau):
    """Every consistent tokenization of ``text`` with log Q_c, from the per-word lattices."""
    doc = U.units(m, text)
    types = list(dict.fromkeys(doc))
    per_type = []
    for u in types:
        lat = U.lattice(m, u[1:])  # the dummy prefix puts the "▁" back
        per_type.append([(p, path_logq(lat, p, tau)) for p in enumerate_paths(lat, 10_000)])
    truth = {}
    for combo in itertools.product(*per_type):
        ids = tuple(t for u in doc for t in combo[types.index(u)][0])
        truth[ids] = sum(q for _, q in combo)
    return truth


@pytest.mark.parametrize("tau", [1.0, 3.0])
def test_consistent_mode_exact_by_enumeration(tiny, tau):
    m = U.UnigramModel.from_file(tiny)
    text = "karito me karito"  # a repeated word
    truth = consistent_truth(m, text, tau)
    whole = U.lattice(m, text)
    everything = enumerate_paths(whole, 100_000)
    # consistent ones are those segmenting both "▁karito" the same way
    assert len(truth) < len(everything) and set(truth) <= set(everything)
    n_word = count_paths(U.lattice(m, "karito"))
    assert len(truth) == n_word * count_paths(U.lattice(m, "me"))
    assert len(everything) == n_word ** 2 * count_paths(U.lattice(m, "me"))
    got = U.proposal(m, text, len(truth), np.random.default_rng(0), tau, mode="consistent")
    assert got.exact and got.n_paths == len(truth) and np.all(got.log_inclusion == 0.0)
    assert dict(zip(got.ids, got.logq.round(12))) == {k: round(v, 12) for k, v in truth.items()}
    assert math.fsum(np.exp(got.logq)) == pytest.approx(1.0, abs=1e-12)
    # the independent proposal of the same text: a sum over occurrences
    ind = U.proposal(m, text, len(everything), np.random.default_rng(0), tau)
    assert ind.exact and len(ind.ids) == len(everything)
    for ids, lq in zip(ind.ids, ind.logq):
        assert lq == pytest.approx(path_logq(whole, ids, tau), abs=1e-12)
    # WR samples follow Q_c; WOR samples are consistent, distinct, with exact logq
    draws = U.sample_document(m, text, 4000, np.random.default_rng(1), tau, "consistent")
    for ids, q in truth.items():
        p = math.exp(q)
        freq = sum(d[0] == ids for d in draws) / len(draws)
        assert abs(freq - p) <= 5 * math.sqrt(p * (1 - p) / len(draws)) + 1e-3
    assert all(d[2] == pytest.approx(d[1] + math.log(4000)) for d in draws[:20])
    wor = U.sample_document(m, text, 3, np.random.default_rng(2), tau, "consistent", wor=True,
                            include_best=True)
    assert wor[0][0] == viterbi(whole)[0] and len({w[0] for w in wor}) == 3
    for ids, q, _ in wor:
        assert q == pytest.approx(truth[ids], abs=1e-12)


def test_proposal_samples_when_too_many_paths(tiny):
    m = U.UnigramModel.from_file(tiny)
    text = "karito anme suneba tokatoka"
    lat = U.lattice(m, text)
    k = count_paths(lat) - 2
    got = U.proposal(m, text, k, np.random.default_rng(3), 4.0, wor=True)
    assert not got.exact and got.n_paths == k + 2 and len(got.ids) == k == len(set(got.ids))
    assert np.all(got.log_inclusion <= 0.0) and np.any(got.log_inclusion < 0.0)
    one = U.proposal(m, "", 4, np.random.default_rng(3))
    assert one.exact and one.ids == [()] and one.logq.tolist() == [0.0]


def test_user_defined_piece_score_matches_sentencepiece(tmp_path):
    import io
    writer = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(training_sentences(n=200)), model_writer=writer,
        model_type="unigram", vocab_size=60, user_defined_symbols=["rime", "ka"],
        normalization_rule_name="identity", byte_fallback=False, minloglevel=2)
    path = tmp_path / "user.model"
    path.write_bytes(writer.getvalue())
    m = U.UnigramModel.from_file(path)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    rime = m.pieces.index("rime")
    assert m._user_scores[rime] == float(np.float32(-0.1))  # see the module docstring
    for text in ("karime rimeka", "xé karime", "zz", "me rime"):  # x, é, z: <unk> arcs
        lat = U.lattice(m, text)
        # sentencepiece merges adjacent <unk> pieces in its output; the lattice does not
        best = [t for i, t in enumerate(viterbi(lat)[0])
                if not (t == m.unk_id and i and viterbi(lat)[0][i - 1] == m.unk_id)]
        assert best == sp.encode(text), text
        proto = sp.nbest_encode(text, nbest_size=4, out_type="immutable_proto")
        assert [s for _, s in nbest(lat, 4)] == pytest.approx([nb.score for nb in proto.nbests],
                                                              abs=1e-4)
        assert entropy(lat, 2.0) == pytest.approx(sp.calculate_entropy(text, 0.5),
                                                  rel=1e-4, abs=2e-6)


def test_unigram_paths_are_tokenizations_of_the_vocab(tiny):
    """Same byte positions as fairppl.marginal.vocab, and the unigram support is a subset of
    every tokenization (which adds e.g. byte pieces for covered characters)."""
    from fairppl.marginal.vocab import vocab_from_sentencepiece

    m = U.UnigramModel.from_file(tiny)
    vocab = vocab_from_sentencepiece(tiny)
    for text in ("kato xé", " to  me", "anme"):
        data = U.text_bytes(m, text)
        assert data == vocab.text_bytes(text)
        mine = enumerate_paths(U.lattice(m, text), 10_000)
        every = set(enumerate_paths(vocab.lattice(data), 1_000_000))
        assert set(mine) < every and all(vocab.decode(p) == data for p in mine)
