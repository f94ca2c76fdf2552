"""Per-language tokenizers: SentencePiece training (errors, reduction, determinism), the
transformers conversion (id-for-id equal to SentencePiece, byte fallback, decode and save/load
round trips) and the character tokenizer."""

from __future__ import annotations

import os
import random
import struct

import pytest
import sentencepiece as spm
from transformers import AutoTokenizer

from fairppl import tokenizers as tk
from fairppl.core.errors import InputError
from fairppl.tokenizers import spm_model
from fairppl.tokenizers.convert import bpe_merges
from fairppl.tokenizers.training import spm_train

WORDS = ("der die das und ist nicht ein eine mit von zu dem den des auf für Haus König Volk Land "
         "Wasser Straße Bäume größer Jahr Jahre Jahren sprach sagte Herr Herrn Kinder Israel "
         "gegangen ging gehen kam kommen Stadt Städte").split()
PUNCT = [".", ",", ";", ":", "?", "!"]


def synthetic_units(n: int = 400, seed: int = 0) -> list[str]:
    """Deterministic German-like units with numbers (runs of zeros make equal-score ties)."""
    rng = random.Random(seed)
    units = []
    for _ in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(3, 14))]
        if rng.random() < 0.4:
            number = str(rng.choice([1, 2, 3, 5, 12, 22, 120, 300])) + "0" * rng.randint(0, 6)
            words.insert(rng.randrange(len(words) + 1), number)
        unit = " ".join(words)
        unit = unit[0].upper() + unit[1:] + rng.choice(PUNCT)
        units.append(unit)
    return units


# Texts the synthetic training never saw: unseen characters (é, €, CJK, emoji), literal
# special-token spellings, runs of zeros (ties), the empty unit.
HELD_OUT = [
    "Café für 5 €, naïve Größe",
    "你好 世界 🙂 und das Haus",
    "<s> der </s> <unk> <pad> <0x41> <0xC3><0xA9>",
    "a<s>b <<s>> x<0x41>y",
    "3000000000000 und 1200000000 Jahre",
    "",
    "x",
]

_trained: dict = {}


def trained(tmp_path_factory, model_type: str, size: int) -> tuple[str, dict]:
    """Train (once per session) on the synthetic units; return (model file, record)."""
    key = (model_type, size)
    if key not in _trained:
        folder = tmp_path_factory.mktemp(f"spm_{model_type}_{size}")
        record = tk.train_sentencepiece(synthetic_units(), model_type, size, str(folder / "m"))
        _trained[key] = (str(folder / "m.model"), record)
    return _trained[key]


def spm_ids(model_file: str, texts: list[str]) -> list[list[int]]:
    return spm.SentencePieceProcessor(model_file=model_file).encode(texts)


def byte_ids(text: str) -> list[int]:
    return [4 + b for b in text.encode("utf-8")]


# ---------------------------------------------------------------------------------------------
# train_sentencepiece


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_train_record_files_and_specials(tmp_path, model_type):
    units = synthetic_units()
    record = tk.train_sentencepiece(units, model_type, 400, str(tmp_path / "tok"))
    assert record == {"model_type": model_type, "vocab_size_requested": 400, "vocab_size": 400,
                      "reduced": False, "n_train_units": len(units),
                      "n_train_chars": sum(len(u) for u in units)}
    # no temporary file; the model sealed (its digest recorded, fairppl.core.integrity)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".tok.model.sha256", "tok.model",
                                                          "tok.vocab"]
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "tok.model"))
    assert sp.get_piece_size() == 400
    assert [sp.id_to_piece(i) for i in range(4)] == ["<unk>", "<s>", "</s>", "<pad>"]
    assert (sp.unk_id(), sp.bos_id(), sp.eos_id(), sp.pad_id()) == (0, 1, 2, 3)
    assert [sp.id_to_piece(i) for i in (4, 5, 259)] == ["<0x00>", "<0x01>", "<0xFF>"]
    assert all(sp.is_byte(i) for i in range(4, 260))
    vocab_lines = (tmp_path / "tok.vocab").read_text(encoding="utf-8").splitlines()
    assert len(vocab_lines) == 400
    assert [line.split("\t")[0] for line in vocab_lines[:5]] == \
        ["<unk>", "<s>", "</s>", "<pad>", "<0x00>"]
    assert all(line.split("\t")[0] == sp.id_to_piece(i) for i, line in enumerate(vocab_lines))
    # the proto reader agrees with SentencePiece's own accessors
    spec = tk.parse_spm_model((tmp_path / "tok.model").read_bytes())
    assert spec["model_type"] == model_type and spec["byte_fallback"]
    assert spec["normalizer_name"] == "identity" and not spec["remove_extra_whitespaces"]
    assert [(p, s) for p, s, _ in spec["pieces"]] == \
        [(sp.id_to_piece(i), sp.get_score(i)) for i in range(400)]


def test_unigram_scores_are_on_the_grid(tmp_path_factory):
    model_file, _ = trained(tmp_path_factory, "unigram", 400)
    sp = spm.SentencePieceProcessor(model_file=model_file)
    scores = [sp.get_score(i) for i in range(260, sp.get_piece_size())]
    assert all(s * 256 == round(s * 256) for s in scores)
    assert len(set(scores)) > 50  # still a real distribution, not flattened


def test_train_is_deterministic(tmp_path):
    units = synthetic_units()
    for model_type in ("unigram", "bpe"):
        tk.train_sentencepiece(units, model_type, 350, str(tmp_path / "a" / model_type))
        tk.train_sentencepiece(units, model_type, 350, str(tmp_path / "b" / model_type))
        for ext in (".model", ".vocab"):
            a = (tmp_path / "a" / (model_type + ext)).read_bytes()
            b = (tmp_path / "b" / (model_type + ext)).read_bytes()
            assert a == b, f"{model_type}{ext} differs between two identical trainings"


TINY = ["hello world", "the cat sat on the mat", "abc def"] * 3  # 9 units, 120 characters


def _largest(model_type: str, tmp_path) -> int:
    with pytest.raises(InputError) as err:
        tk.train_sentencepiece(TINY, model_type, 500, str(tmp_path / "big"))
    message = str(err.value)
    assert "vocabulary size 500 is too large" in message
    assert "9 units, 120 characters" in message
    assert "tokenizers.allow_vocab_reduction: true" in message and "config" in message
    assert not (tmp_path / "big.model").exists() and not (tmp_path / "big.vocab").exists()
    largest = int(message.split("at most ")[1].split()[0])
    assert f"<= {largest}" in message
    return largest


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_too_large_vocabulary_names_requested_and_maximum(tmp_path, model_type):
    largest = _largest(model_type, tmp_path)
    # the maximum is exact: it trains, one more does not
    assert tk.train_sentencepiece(TINY, model_type, largest, str(tmp_path / "ok"))["vocab_size"] \
        == largest
    with pytest.raises(InputError, match=rf"size {largest + 1} is too large.*at most {largest} "):
        tk.train_sentencepiece(TINY, model_type, largest + 1, str(tmp_path / "no"))


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_reduction_record(tmp_path, model_type):
    largest = _largest(model_type, tmp_path)
    record = tk.train_sentencepiece(TINY, model_type, 500, str(tmp_path / "red"),
                                    allow_reduction=True)
    assert record == {"model_type": model_type, "vocab_size_requested": 500,
                      "vocab_size": largest, "reduced": True, "n_train_units": 9,
                      "n_train_chars": 120}
    assert spm.SentencePieceProcessor(
        model_file=str(tmp_path / "red.model")).get_piece_size() == largest


def test_sentencepiece_raises_what_we_parse():
    """The messages train_sentencepiece parses, as sentencepiece 0.2.1 raises them."""
    with pytest.raises(RuntimeError, match=r"Vocabulary size too high \(500\)\. Please set it "
                                           r"to a value <= \d+\."):
        spm_train(TINY, "bpe", 500, 0, 1.0)
    with pytest.raises(RuntimeError, match=r"Vocabulary size is smaller than required_chars\. "
                                           r"100 vs 276\."):
        spm_train(TINY, "unigram", 100, 0, 1.0)


def test_too_small_vocabulary(tmp_path):
    # 4 specials + 256 bytes + 16 distinct characters (space and "▁" included) = 276
    with pytest.raises(InputError, match=r"size 270 is too small.*at least 276 pieces"):
        tk.train_sentencepiece(TINY, "bpe", 270, str(tmp_path / "m"), allow_reduction=True)


@pytest.mark.parametrize("bad", [
    dict(model_type="wordpiece"), dict(vocab_size=0), dict(vocab_size=1.5),
    dict(texts=[]), dict(texts=["", ""]), dict(texts=["a\nb"]),
])
def test_bad_training_arguments(tmp_path, bad):
    args = dict(texts=TINY, model_type="bpe", vocab_size=300) | bad
    with pytest.raises(InputError):
        tk.train_sentencepiece(args["texts"], args["model_type"], args["vocab_size"],
                               str(tmp_path / "m"))


# ---------------------------------------------------------------------------------------------
# to_hf_tokenizer


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_hf_equals_sentencepiece_on_synthetic_and_held_out(tmp_path_factory, model_type):
    model_file, _ = trained(tmp_path_factory, model_type, 400)
    hf = tk.to_hf_tokenizer(model_file)
    texts = synthetic_units() + synthetic_units(200, seed=1) + HELD_OUT
    assert tk.tokenize_units(hf, texts) == spm_ids(model_file, texts)
    assert tk.vocab_size(hf) == 400
    assert (hf.unk_token_id, hf.bos_token_id, hf.eos_token_id, hf.pad_token_id) == (0, 1, 2, 3)


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_unseen_characters_become_their_bytes(tmp_path_factory, model_type):
    model_file, _ = trained(tmp_path_factory, model_type, 400)
    hf = tk.to_hf_tokenizer(model_file)
    sp = spm.SentencePieceProcessor(model_file=model_file)
    for char in ("é", "€", "你", "🙂", "<", "Ω"):
        assert sp.piece_to_id(char) == 0, f"{char!r} unexpectedly in the training text"
        ids = tk.tokenize_units(hf, [char])[0]
        assert ids == [sp.piece_to_id("\u2581")] + byte_ids(char), char
        assert ids == sp.encode(char)
    assert tk.tokenize_units(hf, ["é"])[0][1:] == [4 + 0xC3, 4 + 0xA9]
    ids = tk.tokenize_units(hf, ["Haus é Haus"])[0]
    assert 0 not in ids  # open vocabulary: never <unk>


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_decode_round_trip_and_no_automatic_specials(tmp_path_factory, model_type):
    model_file, _ = trained(tmp_path_factory, model_type, 400)
    hf = tk.to_hf_tokenizer(model_file)
    texts = synthetic_units(100, seed=2) + HELD_OUT
    for text, ids in zip(texts, tk.tokenize_units(hf, texts)):
        assert hf.decode(ids) == text
        assert hf(text)["input_ids"] == ids  # add_special_tokens=True adds nothing
        assert hf(text, add_special_tokens=False)["input_ids"] == ids
    # SentencePiece's own decode agrees
    sp = spm.SentencePieceProcessor(model_file=model_file)
    assert [sp.decode(ids) for ids in sp.encode(texts)] == texts
    # batching pads with <pad> = 3
    batch = hf(["Haus", "das Haus ist"], padding=True)
    assert batch["input_ids"][0][-1] == 3 and batch["attention_mask"][0][-1] == 0


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_save_load_round_trip(tmp_path_factory, tmp_path, model_type):
    model_file, _ = trained(tmp_path_factory, model_type, 400)
    hf = tk.to_hf_tokenizer(model_file)
    hf.save_pretrained(str(tmp_path / "hf"))
    loaded = AutoTokenizer.from_pretrained(str(tmp_path / "hf"))
    texts = synthetic_units(150, seed=3) + HELD_OUT
    ids = spm_ids(model_file, texts)
    assert tk.tokenize_units(loaded, texts) == ids
    assert [loaded(t)["input_ids"] for t in texts] == ids
    assert [loaded.decode(i) for i in ids] == texts
    assert tk.vocab_size(loaded) == 400
    assert (loaded.unk_token_id, loaded.bos_token_id, loaded.eos_token_id,
            loaded.pad_token_id) == (0, 1, 2, 3)


def test_unigram_literal_lt_inside_pieces(tmp_path):
    """'<' as part of longer pieces takes the escaped path of to_hf_tokenizer; literal special
    and byte spellings must still be spelled with ordinary pieces, as SentencePiece does."""
    rng = random.Random(5)
    units = [" ".join(rng.choice(["<<", "a<b", "<s", "s>", "<0x", "x41>", "Haus", "<", "das"])
                      for _ in range(rng.randint(2, 8))) for _ in range(300)]
    tk.train_sentencepiece(units, "unigram", 280, str(tmp_path / "lt"))
    model_file = str(tmp_path / "lt.model")
    sp = spm.SentencePieceProcessor(model_file=model_file)
    assert any("<" in sp.id_to_piece(i) and len(sp.id_to_piece(i)) > 1
               for i in range(260, sp.get_piece_size()))
    hf = tk.to_hf_tokenizer(model_file)
    texts = units + HELD_OUT + ["<s><unk></s><pad><0x41><0xFF>", "<<s>>", "a<0x41>b <unk>"]
    assert tk.tokenize_units(hf, texts) == sp.encode(texts)
    assert [hf.decode(i) for i in tk.tokenize_units(hf, texts)] == texts


def tie_units(n: int = 600, seed: int = 0) -> list[str]:
    """Units with many round numbers: the unigram model learns "0", "00", "000", "0000"."""
    rng = random.Random(seed)
    words = WORDS[:20]
    units = []
    for _ in range(n):
        unit = [rng.choice(words) for _ in range(rng.randint(3, 12))]
        number = str(rng.choice([1, 2, 3, 5, 12, 22, 120, 300])) + "0" * rng.randint(1, 6)
        unit.insert(rng.randrange(len(unit)), number)
        units.append(" ".join(unit) + ".")
    return units


def test_unigram_ties_match_thanks_to_quantized_scores(tmp_path, monkeypatch):
    """Runs of zeros have segmentations of equal score (000|0 vs 0|000). With SentencePiece's
    raw float32 scores, tokenizers breaks some ties differently; on the 2**-8 grid it never does.
    """
    raw = spm_train(tie_units(), "unigram", 340, 0, 1.0)
    (tmp_path / "raw.model").write_bytes(raw)
    (tmp_path / "q.model").write_bytes(tk.quantize_unigram_scores(raw))
    ties = [(" ".join(WORDS[:k]) + f" {lead}" + "0" * zeros + " und").strip()
            for k in range(0, 40, 3) for zeros in range(1, 14) for lead in ("1", "3", "12", "5")]
    quantized = tk.to_hf_tokenizer(str(tmp_path / "q.model"))
    assert tk.tokenize_units(quantized, ties) == spm_ids(str(tmp_path / "q.model"), ties)
    # the raw model is refused ...
    with pytest.raises(InputError, match="2\\*\\*-8 grid"):
        tk.to_hf_tokenizer(str(tmp_path / "raw.model"))
    # ... because it would disagree (this is what the grid fixes)
    monkeypatch.setattr(spm_model, "SCORE_QUANTUM", 2.0 ** -40)
    unquantized = tk.to_hf_tokenizer(str(tmp_path / "raw.model"))
    got = tk.tokenize_units(unquantized, ties)
    want = spm_ids(str(tmp_path / "raw.model"), ties)
    differ = [(g, w) for g, w in zip(got, want) if g != w]
    assert differ, "expected float32 tie-breaking differences with unquantized scores"
    assert all(sorted(g) == sorted(w) for g, w in differ)  # same pieces, another order: ties


def test_quantize_changes_only_normal_scores():
    raw = spm_train(synthetic_units(200), "unigram", 320, 0, 1.0)
    quantized = tk.quantize_unigram_scores(raw)
    assert len(quantized) == len(raw)
    before, after = tk.parse_spm_model(raw), tk.parse_spm_model(quantized)
    for (p, s, kind), (p2, s2, kind2) in zip(before["pieces"], after["pieces"]):
        assert (p, kind) == (p2, kind2)
        assert abs(s - s2) <= 2.0 ** -9
        assert s2 == struct.unpack("<f", struct.pack("<f", round(s * 256) / 256))[0]


def test_unsupported_model_is_refused(tmp_path):
    spm.SentencePieceTrainer.train(sentence_iterator=iter(synthetic_units(200)),
                                   model_prefix=str(tmp_path / "nfkc"), vocab_size=300,
                                   model_type="bpe", minloglevel=2, num_threads=1)
    with pytest.raises(InputError, match="unsupported SentencePiece model"):
        tk.to_hf_tokenizer(str(tmp_path / "nfkc.model"))
    (tmp_path / "junk.model").write_bytes(b"\xff\xff\xff")
    with pytest.raises(InputError, match="junk.model"):
        tk.to_hf_tokenizer(str(tmp_path / "junk.model"))


@pytest.fixture(scope="module")
def bible_units():
    db = os.environ.get("FAIRPPL_BIBLE_DB")
    if not db:
        pytest.skip("FAIRPPL_BIBLE_DB not set (run `make resources`)")
    from fairppl.corpus.readers import read_bible_db
    from fairppl.core.text import normalize

    verses = read_bible_db(db, {"deu": "s"}, books=[8, 32, 57])["deu"]
    train = [normalize(t) for uid, t in verses if not uid.startswith("57.")]
    held_out = [normalize(t) for uid, t in verses if uid.startswith("57.")]
    return train, held_out


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
@pytest.mark.parametrize("size", [1000, 4000])
def test_hf_equals_sentencepiece_on_bible(tmp_path, bible_units, model_type, size):
    """German Schlachter, Ruth + Jonah (train) and Philemon (held out): every unit, same ids."""
    train, held_out = bible_units
    record = tk.train_sentencepiece(train, model_type, size, str(tmp_path / "m"),
                                    allow_reduction=True)
    assert record["vocab_size"] <= size and record["reduced"] == (record["vocab_size"] < size)
    model_file = str(tmp_path / "m.model")
    hf = tk.to_hf_tokenizer(model_file)
    texts = train + held_out
    ids = tk.tokenize_units(hf, texts)
    assert ids == spm_ids(model_file, texts)
    assert [hf.decode(i) for i in ids] == texts
    assert sum(i == 0 for unit in ids for i in unit) == 0


def test_bpe_merges_rank_and_splits():
    pieces = [("<unk>", 0.0, tk.UNKNOWN), ("ab", -0.0, tk.NORMAL), ("aba", -1.0, tk.NORMAL),
              ("a", -2.0, tk.NORMAL), ("b", -3.0, tk.NORMAL), ("ba", -4.0, tk.NORMAL)]
    assert bpe_merges(pieces) == [("a", "b"), ("ab", "a"), ("a", "ba"), ("b", "a")]


# ---------------------------------------------------------------------------------------------
# char_tokenizer


def test_char_tokenizer_vocabulary_and_ids(tmp_path):
    tok = tk.char_tokenizer(["abca b", "ba"])
    # counts: a 3, b 3, " " 1, c 1 -> a(97) b(98) " "(32) c(99)
    assert tok.convert_ids_to_tokens([0, 1, 2, 3, 4, 259, 260, 261, 262, 263]) == \
        ["<unk>", "<s>", "</s>", "<pad>", "<0x00>", "<0xFF>", "a", "b", " ", "c"]
    assert tk.vocab_size(tok) == 264
    assert (tok.unk_token_id, tok.bos_token_id, tok.eos_token_id, tok.pad_token_id) == \
        (0, 1, 2, 3)
    text = "ab é c<s>"
    expected = [260, 261, 262, 4 + 0xC3, 4 + 0xA9, 262, 263, 4 + ord("<"), 4 + ord("s"),
                4 + ord(">")]
    assert tk.tokenize_units(tok, [text]) == [expected]
    assert tok(text)["input_ids"] == expected  # no automatic <s>
    assert tok.decode(expected) == text
    tok.save_pretrained(str(tmp_path / "char"))
    loaded = AutoTokenizer.from_pretrained(str(tmp_path / "char"))
    assert tk.tokenize_units(loaded, [text, "", "  a"]) == [expected, [], [262, 262, 260]]
    assert loaded.decode(expected) == text and tk.vocab_size(loaded) == 264
    assert loaded(["a", "abc"], padding=True)["input_ids"][0] == [260, 3, 3]


def test_char_tokenizer_round_trip_real_text():
    units = synthetic_units(200)
    tok = tk.char_tokenizer(units)
    texts = units + HELD_OUT + ["  double  spaces ", "\u2581 literal", "tab\there"]
    ids = tk.tokenize_units(tok, texts)
    vocab = tok.get_vocab()
    for text, unit_ids in zip(texts, ids):
        assert tok.decode(unit_ids) == text
        expected = []
        for c in text:  # one token per seen character, its UTF-8 bytes otherwise
            expected += [vocab[c]] if c in vocab else byte_ids(c)
        assert unit_ids == expected
    assert 0 not in [i for unit in ids for i in unit]
    seen = set("".join(units))
    order = tok.convert_ids_to_tokens(list(range(260, tk.vocab_size(tok))))
    assert set(order) == seen
    counts = {c: "".join(units).count(c) for c in seen}
    assert order == sorted(seen, key=lambda c: (-counts[c], ord(c)))


def test_tokenize_units_empty():
    assert tk.tokenize_units(tk.char_tokenizer(["a"]), []) == []
