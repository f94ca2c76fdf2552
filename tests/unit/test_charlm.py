"""The character n-gram model on KenLM: tokens, exact scoring against a hand-written ARPA file, and a
real lmplz run (skipped unless FAIRPPL_KENLM_BIN names the folder with lmplz and build_binary)."""

from __future__ import annotations

import math
import os
import random
import subprocess
from pathlib import Path

import pytest

kenlm = pytest.importorskip("kenlm")

from fairppl.ngram.char import (  # noqa: E402
    SPACE,
    UnitScore,
    from_char_tokens,
    score_unit,
    score_units,
    to_char_tokens,
    unseen_char_bits,
    write_training_text,
)
from fairppl.core.errors import InputError  # noqa: E402
from fairppl.ngram.kenlm_tool import lmplz_command, load_model, train_model  # noqa: E402

L2 = math.log2(10)  # bits per decimal digit of log-probability

# ---------------------------------------------------------------------------------------------
# to_char_tokens


def test_to_char_tokens_example():
    assert to_char_tokens("ab c") == f"a b {SPACE} c"
    assert to_char_tokens("ab c") == "a b \u2581 c"
    assert to_char_tokens("") == ""
    assert to_char_tokens("é中 x") == f"é 中 {SPACE} x"


@pytest.mark.parametrize("text", ["ab c", "", "a", "Grüß Gott, 世界!", "x  y", " lead", "ẞ ß\u200d"])
def test_to_char_tokens_round_trip(text):
    tokens = to_char_tokens(text)
    assert from_char_tokens(tokens) == text
    # One KenLM word per character: the Python module and lmplz both split at ASCII whitespace.
    assert len(tokens.split()) == len(text)
    assert tokens.split() == [SPACE if c == " " else c for c in text]


def test_to_char_tokens_rejects_space_symbol():
    with pytest.raises(InputError, match="U\\+2581"):
        to_char_tokens(f"a{SPACE}b")


@pytest.mark.parametrize("bad", ["\t", "\n", "\r", "\x0b", "\x0c", "\0", "\u00a0", "\u3000", "\u2028", "\ud800"])
def test_to_char_tokens_rejects_separators(bad):
    with pytest.raises(InputError, match=f"U\\+{ord(bad):04X}"):
        to_char_tokens(f"ab{bad}c")


def test_unseen_char_bits():
    assert unseen_char_bits("a") == 8
    assert unseen_char_bits("é") == 16
    assert unseen_char_bits("中") == 24
    assert unseen_char_bits("😀") == 32
    with pytest.raises(ValueError):
        unseen_char_bits("ab")


def test_write_training_text(tmp_path):
    out = tmp_path / "train.chars.txt"
    assert write_training_text(["ab c", "", "é"], out) == 3
    assert out.read_bytes() == f"a b {SPACE} c\n\né\n".encode("utf-8")
    # A bad unit fails the whole write and leaves no file (nor a temporary one) behind.
    bad = tmp_path / "bad.txt"
    with pytest.raises(InputError, match="training unit 2"):
        write_training_text(["ok", "tab\there"], bad)
    assert list(tmp_path.iterdir()) == [out]


# ---------------------------------------------------------------------------------------------
# Exact scores from a hand-written bigram ARPA file.
# All log10 values are dyadic (exact in float32, KenLM's storage), so KenLM's sums are exact.
# Semantics: log10 p(w | h) = bigram(h w) if listed, else backoff(h) + unigram(w).

HAND_ARPA = f"""\\data\\
ngram 1=6
ngram 2=4

\\1-grams:
-1.5\t<unk>\t0
-99\t<s>\t-0.25
-0.75\t</s>\t0
-0.5\ta\t-0.125
-1\tb\t-0.375
-1.25\t{SPACE}\t-0.5

\\2-grams:
-0.25\t<s> a
-0.625\ta b
-0.5\tb </s>
-0.375\t{SPACE} a

\\end\\
"""


@pytest.fixture(scope="module")
def hand_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("arpa") / "hand.arpa"
    path.write_text(HAND_ARPA, encoding="utf-8")
    return load_model(path), path


# unit -> (log10 terms by hand, n_chars, n_bytes, n_unseen, spell-out bits)
HAND_CASES = {
    # a|<s> bigram; b|a bigram; </s>|b bigram
    "ab": ([-0.25, -0.625, -0.5], 2, 2, 0, 0),
    # b|<s> = bo(<s>) + p(b); a|b = bo(b) + p(a); </s>|a = bo(a) + p(</s>)
    "ba": ([-0.25 - 1, -0.375 - 0.5, -0.125 - 0.75], 2, 2, 0, 0),
    # a|<s>; ▁|a = bo(a) + p(▁); b|▁ = bo(▁) + p(b); </s>|b bigram
    "a b": ([-0.25, -0.125 - 1.25, -0.5 - 1, -0.5], 3, 3, 0, 0),
    # a|<s>; <unk>|a = bo(a) + p(<unk>); </s>|<unk> = bo(<unk>) + p(</s>); é is 2 UTF-8 bytes
    "aé": ([-0.25, -0.125 - 1.5, 0 - 0.75], 2, 3, 1, 16),
    # <unk>|<s>; ▁|<unk>; a|▁ bigram; </s>|a; 中 is 3 UTF-8 bytes
    "中 a": ([-0.25 - 1.5, 0 - 1.25, -0.375, -0.125 - 0.75], 3, 5, 1, 24),
    # two unseen characters in a row: <unk>|<s>; <unk>|<unk>; </s>|<unk>
    "éé": ([-0.25 - 1.5, 0 - 1.5, 0 - 0.75], 2, 4, 2, 32),
    # the empty unit still pays for its end: </s>|<s> = bo(<s>) + p(</s>)
    "": ([-0.25 - 0.75], 0, 0, 0, 0),
}


@pytest.mark.parametrize("unit", list(HAND_CASES))
def test_score_unit_exact(hand_model, unit):
    model, _ = hand_model
    terms, n_chars, n_bytes, n_unseen, spell = HAND_CASES[unit]
    expected_model_bits = -sum(terms) * L2
    got = score_unit(model, unit)
    assert isinstance(got, UnitScore)
    assert (got.n_chars, got.n_bytes, got.n_unseen) == (n_chars, n_bytes, n_unseen)
    assert got.bits_unseen_spellout == spell
    assert got.bits_model == pytest.approx(expected_model_bits, abs=1e-9)
    assert got.bits == pytest.approx(expected_model_bits + spell, abs=1e-9)


def test_score_unit_literal_values(hand_model):
    """The same numbers written out, so a wrong log-base conversion cannot hide in shared code."""
    model, _ = hand_model
    assert score_unit(model, "ab").bits == pytest.approx(1.375 * 3.321928094887362, abs=1e-9)
    assert score_unit(model, "aé").bits == pytest.approx(2.625 * 3.321928094887362 + 16, abs=1e-9)
    assert score_unit(model, "中 a").bits == pytest.approx(4.25 * 3.321928094887362 + 24, abs=1e-9)


def test_score_units_matches_score_unit(hand_model):
    model, path = hand_model
    units = list(HAND_CASES)
    assert score_units(path, units, progress=False) == [score_unit(model, u) for u in units]


def test_score_unit_rejects_bad_text(hand_model):
    model, _ = hand_model
    with pytest.raises(InputError):
        score_unit(model, f"a{SPACE}")


def test_model_without_unk_is_an_error(tmp_path):
    arpa = tmp_path / "nounk.arpa"
    arpa.write_text(HAND_ARPA.replace("ngram 1=6", "ngram 1=5").replace("-1.5\t<unk>\t0\n", ""),
                    encoding="utf-8")
    model = load_model(arpa)  # KenLM substitutes log10 p(<unk>) = -100
    assert score_unit(model, "ab").bits == pytest.approx(1.375 * L2, abs=1e-9)
    with pytest.raises(ValueError, match="no probability to unseen"):
        score_unit(model, "aé")


# ---------------------------------------------------------------------------------------------
# A real lmplz model

KENLM_BIN = os.environ.get("FAIRPPL_KENLM_BIN")
needs_lmplz = pytest.mark.skipif(
    not KENLM_BIN or not (Path(KENLM_BIN) / "lmplz").exists(),
    reason="set FAIRPPL_KENLM_BIN to the folder holding KenLM's lmplz (make resources)",
)

_DET = ["the", "a", "this", "every", "no"]
_ADJ = ["old", "quiet", "green", "small", "bright", "heavy", "little", "wise"]
_NOUN = ["king", "river", "house", "shepherd", "stone", "garden", "city", "mountain", "servant"]
_VERB = ["saw", "built", "crossed", "found", "kept", "followed", "praised", "left"]
_PREP = ["near", "beyond", "under", "before", "beside"]


def _sentence(rng: random.Random) -> str:
    def np():
        words = [rng.choice(_DET)]
        if rng.random() < 0.6:
            words.append(rng.choice(_ADJ))
        words.append(rng.choice(_NOUN))
        return words

    words = np() + [rng.choice(_VERB)] + np()
    if rng.random() < 0.5:
        words += [rng.choice(_PREP)] + np()
    text = " ".join(words)
    return text[0].upper() + text[1:] + rng.choice([".", ".", "!", "?"])


def _corpus(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(_sentence(rng) for _ in range(rng.randint(1, 3))) for _ in range(n)]


@pytest.fixture(scope="module")
def real_model(tmp_path_factory):
    if not KENLM_BIN or not (Path(KENLM_BIN) / "lmplz").exists():
        pytest.skip("set FAIRPPL_KENLM_BIN to the folder holding KenLM's lmplz")
    work = tmp_path_factory.mktemp("lmplz")
    train = _corpus(seed=1, n=400)
    text = work / "train.chars.txt"
    assert write_training_text(train, text) == 400
    arpa = work / "char.o4.arpa"
    tmp = work / "tmp"
    tmp.mkdir()
    argv = lmplz_command(Path(KENLM_BIN) / "lmplz", 4, text, arpa, tmp, memory="64M")
    run = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return train, arpa


def _arpa_unigrams(arpa: Path) -> dict[str, float]:
    out, inside = {}, False
    for line in arpa.read_text(encoding="utf-8").splitlines():
        if line.startswith("\\1-grams:"):
            inside = True
        elif line.startswith("\\"):
            inside = False
        elif inside and line.strip():
            fields = line.split("\t")
            out[fields[1]] = float(fields[0])
    return out


@needs_lmplz
@pytest.mark.parametrize("context", ["", "The old k", "Every shepherd saw a", "zq"])
def test_next_char_distribution_sums_to_one(real_model, context):
    """p(next | context) over all seen characters, </s> and <unk> sums to 1: the bits we charge
    come from a proper distribution (lmplz's <unk> takes a zeroton's share of the unigram mass)."""
    train, arpa = real_model
    model = load_model(arpa)
    seen = sorted({SPACE if c == " " else c for unit in train for c in unit})
    unigrams = _arpa_unigrams(arpa)
    assert set(unigrams) == set(seen) | {"<s>", "</s>", "<unk>"}
    assert unigrams["<unk>"] > -10  # lmplz gives <unk> real mass (about that of a zeroton)

    ctx = to_char_tokens(context)
    total = 0.0
    for token in seen:
        log10p, _, oov = list(model.full_scores(f"{ctx} {token}".strip(), bos=True, eos=False))[-1]
        assert not oov
        total += 10 ** log10p
    total += 10 ** list(model.full_scores(ctx, bos=True, eos=True))[-1][0]  # </s>
    log10p, _, oov = list(model.full_scores(f"{ctx} é".strip(), bos=True, eos=False))[-1]
    assert oov
    total += 10 ** log10p  # <unk>
    assert total == pytest.approx(1.0, abs=1e-4)


@needs_lmplz
def test_shuffled_text_costs_more(real_model):
    train, arpa = real_model
    heldout = _corpus(seed=2, n=60)
    rng = random.Random(3)
    shuffled = []
    for unit in heldout:
        chars = list(unit)
        rng.shuffle(chars)
        shuffled.append("".join(chars))
    good = score_units(arpa, heldout, progress=False)
    bad = score_units(arpa, shuffled, progress=False)
    assert sum(s.n_unseen for s in good) == 0
    assert [s.n_chars for s in good] == [s.n_chars for s in bad]
    bpc_good = math.fsum(s.bits for s in good) / sum(s.n_chars for s in good)
    bpc_bad = math.fsum(s.bits for s in bad) / sum(s.n_chars for s in bad)
    assert bpc_good < 1.5  # a templated corpus is very predictable
    assert bpc_bad > 2 * bpc_good


@needs_lmplz
def test_binary_model_scores_like_arpa(real_model, tmp_path):
    """The pipeline binarises with our build_binary and scores with the Python module."""
    train, arpa = real_model
    binary = tmp_path / "char.o4.kenlm"
    run = subprocess.run([str(Path(KENLM_BIN) / "build_binary"), "-S", "64M", str(arpa), str(binary)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    units = _corpus(seed=4, n=10) + ["Ünseen ché中"]
    a = score_units(arpa, units, progress=False)
    b = score_units(binary, units, progress=False)
    for x, y in zip(a, b):
        assert (x.n_chars, x.n_unseen) == (y.n_chars, y.n_unseen)
        assert x.bits == pytest.approx(y.bits, abs=1e-6)


@needs_lmplz
def test_discount_fallback_needed_on_tiny_corpus(tmp_path):
    text = tmp_path / "tiny.txt"
    write_training_text(["abc", "bca"], text)
    lmplz = Path(KENLM_BIN) / "lmplz"
    strict = subprocess.run(lmplz_command(lmplz, 3, text, tmp_path / "a.arpa", tmp_path, memory="64M",
                                          discount_fallback=False), capture_output=True, text=True)
    assert strict.returncode != 0
    assert "discount" in strict.stderr.lower()
    ok = subprocess.run(lmplz_command(lmplz, 3, text, tmp_path / "b.arpa", tmp_path, memory="64M"),
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert score_unit(load_model(tmp_path / "b.arpa"), "abc").bits > 0


@needs_lmplz
def test_train_model_binary_matches_arpa(real_model, tmp_path):
    """train_model (lmplz + build_binary in one step, the ARPA kept in tmpdir) gives a binary that
    scores exactly as the ARPA file trained the same way, and leaves no intermediate files."""
    train, arpa = real_model
    text = tmp_path / "train.txt"
    write_training_text(train, text)
    work = tmp_path / "tmp"
    work.mkdir()
    binary = tmp_path / "char.o4.kenlm"
    train_model(text, binary, order=4, lmplz=Path(KENLM_BIN) / "lmplz",
                build_binary=Path(KENLM_BIN) / "build_binary", tmpdir=work, memory="64M")
    assert list(work.iterdir()) == []
    heldout = _corpus(seed=4, n=30) + ["zq é"]
    from_arpa = score_units(arpa, heldout, progress=False)
    from_binary = score_units(binary, heldout, progress=False)
    assert [s.bits for s in from_binary] == pytest.approx([s.bits for s in from_arpa], abs=1e-9)


@needs_lmplz
def test_train_model_failure_leaves_nothing(tmp_path):
    """lmplz refuses order 9 beyond its KENLM_MAX_ORDER (7): the error surfaces and neither the
    model nor a partial file is left."""
    text = tmp_path / "train.txt"
    write_training_text(_corpus(seed=1, n=20), text)
    binary = tmp_path / "out" / "char.o9.kenlm"
    with pytest.raises(subprocess.CalledProcessError):
        train_model(text, binary, order=9, lmplz=Path(KENLM_BIN) / "lmplz",
                    build_binary=Path(KENLM_BIN) / "build_binary", tmpdir=tmp_path, memory="64M")
    assert not binary.exists()
    assert not binary.parent.exists() or list(binary.parent.iterdir()) == []
    assert [p.name for p in tmp_path.iterdir() if p.name != "out"] == ["train.txt"]


def test_write_stream_records_what_was_trained_on(tmp_path):
    from fairppl.ngram.training_text import write_stream

    texts = ["ab c", "a b b", ""]
    char = write_stream("char", texts, tmp_path / "c.txt")
    assert char == {"n_tokens": 9}
    assert (tmp_path / "c.txt").read_text(encoding="utf-8").splitlines() == ["a b ▁ c", "a ▁ b ▁ b", ""]
    word = write_stream("word-v1", texts, tmp_path / "w.txt")
    assert word["n_tokens"] == 5 and word["requested"] == 1 and word["words"] == ["b"]
    assert word["n_train_types"] == 4  # ab, c, a, b
    assert word["min_count"] == 1 and word["actual"] == 1
    # `all`: every type seen twice; the singletons ab, c, a train the UNK class.
    everything = write_stream("word-vall", texts, tmp_path / "a.txt")
    assert {k: everything[k] for k in ("requested", "min_count", "actual", "words")} == {
        "requested": None, "min_count": 2, "actual": 1, "words": ["b"]}
    assert (tmp_path / "a.txt").read_text(encoding="utf-8").splitlines() == [
        "<oov> <oov>", "<oov> b b", ""]
    # A size that keeps every train type trains no <unk>: refused, never capped (4 types here).
    for size in (4, 1000000):
        with pytest.raises(InputError) as err:
            write_stream(f"word-v{size}", texts, tmp_path / "w.txt", where="bible/eng")
        assert str(err.value) == (
            f"field 'word_ngram.vocab_sizes': {size} is not below the 4 word types of the train "
            f"split of bible/eng, so no train word is left out and <unk> is never trained; "
            f"expected a size below 4 that leaves some train types out (or `all`)")
    assert write_stream("word-v3", texts, tmp_path / "w.txt")["actual"] == 3
    with pytest.raises(InputError, match="unknown n-gram stream 'bytes'"):
        write_stream("bytes", texts, tmp_path / "x.txt")
    with pytest.raises(InputError, match="needs its SentencePiece model"):
        write_stream("spm-unigram-10", texts, tmp_path / "x.txt")
