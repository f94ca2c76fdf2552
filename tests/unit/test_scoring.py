"""fairppl.lm.scoring against brute force, on a tiny random Llama and a character tokenizer built
here (no model files needed)."""

from __future__ import annotations

import math
import random
import string

import pytest
import torch

from fairppl.lm import scoring
from fairppl.core.errors import ScoringError
from fairppl.lm.scoring import conventions, score_texts, token_nats_from_logits

SPECIALS = ["<unk>", "<s>", "</s>", "<pad>"]
CHARS = string.ascii_letters + string.digits + " .,;:!?'-"


def make_tokenizer(byte_fallback: bool = True, bos: bool = True):
    """A character tokenizer: BPE without merges over CHARS, with <0xNN> byte fallback."""
    from tokenizers import Tokenizer, decoders, models
    from transformers import PreTrainedTokenizerFast

    vocab = {tok: i for i, tok in enumerate(SPECIALS)}
    if byte_fallback:
        for b in range(256):
            vocab[f"<0x{b:02X}>"] = len(vocab)
    for ch in CHARS:
        vocab[ch] = len(vocab)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>",
                               byte_fallback=byte_fallback))
    tok.decoder = decoders.Sequence([decoders.ByteFallback(), decoders.Fuse()])
    tok.add_special_tokens(SPECIALS)
    kwargs = dict(unk_token="<unk>", eos_token="</s>", pad_token="<pad>")
    if bos:
        kwargs["bos_token"] = "<s>"
    return PreTrainedTokenizerFast(tokenizer_object=tok, **kwargs)


def make_model(vocab_size: int, seed: int = 0, max_position_embeddings: int = 256):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=vocab_size, hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=max_position_embeddings,
                         initializer_range=0.3,  # far from uniform: differences show
                         bos_token_id=1, eos_token_id=2, pad_token_id=3,
                         tie_word_embeddings=False)
    return LlamaForCausalLM(config).eval()


def make_texts(n: int = 40, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    words = ["in", "the", "beginning", "God", "created", "heaven", "and", "earth", "Mäuse",
             "über", "naïve", "€5", "日本", "ok", "Sprache", "word."]
    texts = ["", "a", "Ab", " leading and trailing ", "x" * 90]
    while len(texts) < n:
        texts.append(" ".join(rng.choice(words) for _ in range(rng.randint(1, 14))))
    return texts


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def tok():
    return make_tokenizer()


@pytest.fixture(scope="module")
def model(tok):
    return make_model(len(tok))


@pytest.fixture(scope="module")
def texts():
    return make_texts()


def brute_force(model, context: list[int], target: int) -> float:
    """-log p(target | context) from one plain, unbatched forward pass."""
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([context])).logits[0, -1]
    return float(-torch.log_softmax(logits.double(), dim=-1)[target])


def test_tokenizer_is_open_vocabulary(tok, texts):
    for text in texts:
        ids = tok(text, add_special_tokens=False)["input_ids"]
        assert tok.unk_token_id not in ids
        assert tok.decode(ids) == text


def test_batched_equals_one_at_a_time(model, tok, texts):
    batched = score_texts(model, tok, texts, batch_size=7, progress=False)
    assert len(batched) == len(texts)
    for i, text in enumerate(texts):
        (single,) = score_texts(model, tok, [text], batch_size=1, progress=False)
        assert batched[i].token_ids == single.token_ids
        assert abs(batched[i].nats - single.nats) <= 1e-4, (i, text)
        assert batched[i].lossless and single.lossless
    # a token budget that forces many small batches changes nothing either
    small = score_texts(model, tok, texts, batch_size=64, max_batch_tokens=40, progress=False)
    for a, b in zip(batched, small):
        assert abs(a.nats - b.nats) <= 1e-4


def test_padding_mask_changes_no_scored_token(model, tok, texts, monkeypatch):
    """The scorer passes no padding mask (see scoring._PASS_ATTENTION_MASK): with right padding
    and causal attention no scored position can see a pad. Passing the mask must therefore change
    no token's score, in padded batches of very different lengths."""
    without = score_texts(model, tok, texts, batch_size=16, progress=False)
    monkeypatch.setattr(scoring, "_PASS_ATTENTION_MASK", True)
    with_mask = score_texts(model, tok, texts, batch_size=16, progress=False)
    assert max(len(t) for t in texts) > 5 * min(len(t) for t in texts if t)  # real padding
    for a, b in zip(without, with_mask):
        assert a.token_ids == b.token_ids
        assert a.token_nats == pytest.approx(b.token_nats, abs=1e-5)


def test_every_token_equals_brute_force(model, tok, texts, monkeypatch):
    # tiny chunks: the chunked log-softmax path runs many times per batch
    monkeypatch.setattr(scoring, "_CHUNK_FLOATS", 3 * len(tok))
    scored = score_texts(model, tok, texts, batch_size=16, progress=False)
    bos, eos = tok.convert_tokens_to_ids("<s>"), tok.convert_tokens_to_ids("</s>")
    for text, unit in zip(texts, scored):
        ids = tok(text, add_special_tokens=False)["input_ids"]
        full = [bos] + ids + [eos]
        # the first real token and the EOS are scored; BOS is not
        assert unit.token_ids == ids + [eos]
        assert unit.n_tokens == len(ids) + 1
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([full[:-1]])).logits[0]
        expected = -torch.log_softmax(logits.double(), dim=-1)[
            torch.arange(len(full) - 1), torch.tensor(full[1:])]
        assert unit.token_nats == pytest.approx(expected.tolist(), abs=1e-4)
        assert unit.nats == pytest.approx(float(expected.sum()), abs=1e-3)
        assert unit.bits == pytest.approx(unit.nats / math.log(2))


def test_text_without_eos_and_without_bos(model, tok):
    text = "Mäuse und Sprache"
    ids = tok(text, add_special_tokens=False)["input_ids"]
    (no_eos,) = score_texts(model, tok, [text], add_eos=False, progress=False)
    assert no_eos.token_ids == ids
    (no_bos,) = score_texts(model, tok, [text], add_bos=False, progress=False)
    assert no_bos.token_ids == ids[1:] + [tok.eos_token_id]
    assert no_bos.token_nats[0] == pytest.approx(brute_force(model, ids[:1], ids[1]), abs=1e-4)
    (empty,) = score_texts(model, tok, [""], add_eos=False, progress=False)
    assert empty.n_tokens == 0 and empty.nats == 0.0
    assert score_texts(model, tok, [], progress=False) == []


@pytest.mark.parametrize("add_bos", [True, False])
@pytest.mark.parametrize("max_length,stride", [(8, 3), (9, 1), (6, 5)])
def test_windows_score_each_token_once_with_its_window_context(model, tok, texts, max_length,
                                                                stride, add_bos):
    texts = texts[:20]
    scored = score_texts(model, tok, texts, max_length=max_length, stride=stride,
                         add_bos=add_bos, batch_size=5, progress=False)
    bos, eos = tok.bos_token_id, tok.eos_token_id
    prefix = [bos] if add_bos else []
    n_new = max_length - stride - len(prefix)  # tokens scored per later window, minus one
    for text, unit in zip(texts, scored):
        ids = tok(text, add_special_tokens=False)["input_ids"]
        full = prefix + ids + [eos]
        n = len(full) - 1
        assert unit.token_ids == full[1:]  # each token exactly once, in order
        contexts, windows = {}, {}  # full index j -> its context; window number -> [j, ...]
        for j in range(1, n + 1):
            if n <= max_length or j <= max_length:
                w, context = 0, full[:j]  # the first window: the unit's own start
            else:
                # later windows score full[first .. first + n_new], first = L + 1 + k (n_new + 1)
                k = (j - max_length - 1) // (n_new + 1)
                first = max_length + 1 + k * (n_new + 1)
                w, context = k + 1, prefix + full[first - stride:j]
                assert len(context) - len(prefix) >= stride
            assert len(context) <= max_length
            contexts[j] = context
            windows.setdefault(w, []).append(j)
        # brute force: one plain forward per window (a causal model's logits at a position
        # depend on that position's prefix only); each token is read at its own context's end
        for js in windows.values():
            window = contexts[js[-1]]
            with torch.no_grad():
                logits = model(input_ids=torch.tensor([window])).logits[0]
            logp = torch.log_softmax(logits.double(), dim=-1)
            for j in js:
                context = contexts[j]
                assert window[:len(context)] == context  # same prefix: same logits
                expected = float(-logp[len(context) - 1, full[j]])
                assert unit.token_nats[j - 1] == pytest.approx(expected, abs=1e-4), (text, j)
        assert len(windows) == unit.n_windows
        if n > max_length:
            assert unit.n_windows == 1 + math.ceil((n - max_length) / (n_new + 1))


def test_windows_default_to_model_positions(tok):
    model = make_model(len(tok), max_position_embeddings=16)
    text = "in the beginning God created the heaven and the earth"
    (unit,) = score_texts(model, tok, [text], progress=False)
    assert unit.n_windows > 1  # 55 tokens > 16 positions: windowed, default stride 8
    conv = conventions(tok, model)
    assert conv["max_length"] == 16 and conv["stride"] == 8
    with pytest.raises(ValueError, match="stride"):
        score_texts(model, tok, [text], max_length=8, stride=8, progress=False)


def test_nan_is_detected_and_names_the_unit(tok):
    model = make_model(len(tok))
    with torch.no_grad():
        model.get_input_embeddings().weight[tok.convert_tokens_to_ids("z")] = float("nan")
    with pytest.raises(ScoringError, match=r"unit 2: token \d+") as err:
        score_texts(model, tok, ["abc", "hello", "lazy dog", "yes"], progress=False)
    assert "NaN" in str(err.value)


def test_vocab_mismatch_is_an_error_naming_both_sizes(tok):
    small = make_model(len(tok) - 10)
    with pytest.raises(ScoringError, match=f"{len(tok) - 1}.*{len(tok) - 10}"):
        score_texts(small, tok, ["abc"], progress=False)


def test_probabilities_over_the_vocabulary_sum_to_one(model, tok):
    ids = [tok.bos_token_id] + tok("Sprache", add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids])).logits[0]
    vocab = logits.shape[-1]
    for pos in (0, 3, len(ids) - 1):
        nats = token_nats_from_logits(logits[pos].expand(vocab, vocab), torch.arange(vocab))
        assert float(torch.exp(-nats.double()).sum()) == pytest.approx(1.0, abs=1e-5)


def test_lossless_flag_reports_unknown_characters(model):
    tok = make_tokenizer(byte_fallback=False)  # no byte fallback: '€' becomes <unk>
    small = make_model(len(tok))
    units = score_texts(small, tok, ["price 5", "price €5"], progress=False)
    assert units[0].lossless is True
    assert units[1].lossless is False
    assert tok.unk_token_id in units[1].token_ids


def test_special_token_text_is_spelled_out(model, tok):
    (unit,) = score_texts(model, tok, ["a</s>b<s>"], progress=False)
    assert unit.token_ids.count(tok.eos_token_id) == 1  # only the appended EOS
    assert tok.bos_token_id not in unit.token_ids
    assert unit.n_tokens == len("a</s>b<s>") + 1
    assert unit.lossless


def test_no_bos_tokenizer_uses_eos_as_start(model):
    tok = make_tokenizer(bos=False)
    assert tok.bos_token_id is None
    (unit,) = score_texts(model, tok, ["ab"], progress=False)
    ids = tok("ab", add_special_tokens=False)["input_ids"]
    assert unit.token_nats[0] == pytest.approx(
        brute_force(model, [tok.eos_token_id], ids[0]), abs=1e-4)
    conv = conventions(tok)
    assert conv["start_token"] == "</s>" and "EOS" in conv["start_token_role"]
    assert conv["end_charged"] is True and conv["log_base"] == "e"


def test_given_start_and_end_tokens_replace_bos_and_eos(model, tok):
    """A pretrained model's document separator instead of its BOS/EOS: the start token is the
    context of the first text token, the end token is appended and charged; cross-checked
    against brute force and against a tokenizer whose own BOS/EOS are those tokens."""
    text = "God said"
    ids = tok(text, add_special_tokens=False)["input_ids"]
    pad, unk = tok.convert_tokens_to_ids("<pad>"), tok.convert_tokens_to_ids("<unk>")
    (unit,) = score_texts(model, tok, [text], start_token="<pad>", end_token="<unk>",
                          progress=False)
    assert unit.token_ids == ids + [unk]
    assert unit.token_nats[0] == pytest.approx(brute_force(model, [pad], ids[0]), abs=1e-4)
    assert unit.token_nats[-1] == pytest.approx(brute_force(model, [pad] + ids, unk), abs=1e-4)
    (default,) = score_texts(model, tok, [text], progress=False)
    assert default.token_ids == ids + [tok.eos_token_id]
    assert default.token_nats[0] != pytest.approx(unit.token_nats[0], abs=1e-3)
    other = make_tokenizer()
    other.bos_token, other.eos_token = "<pad>", "<unk>"
    (same,) = score_texts(model, other, [text], progress=False)
    assert same.token_ids == unit.token_ids
    assert same.token_nats == pytest.approx(unit.token_nats, abs=1e-5)
    conv = conventions(tok, model, start_token="<pad>", end_token="<unk>")
    assert (conv["start_token"], conv["start_token_id"]) == ("<pad>", pad)
    assert (conv["end_token"], conv["end_token_id"]) == ("<unk>", unk)
    assert conv["start_token_role"].startswith("given start token")
    assert conv["end_token_role"].startswith("given end token")
    assert conventions(tok, model)["end_token_role"].startswith("the tokenizer's EOS")


@pytest.mark.parametrize("kwargs,message", [
    ({"start_token": "<|endoftext|>"}, "start token '<\\|endoftext\\|>' is not in"),
    ({"end_token": "</S>"}, "end token '</S>' is not in the tokenizer's vocabulary"),
])
def test_unknown_start_or_end_token_is_an_error(model, tok, kwargs, message):
    """An unknown token must not silently become <unk>."""
    with pytest.raises(ScoringError, match=message):
        score_texts(model, tok, ["ab"], progress=False, **kwargs)
    with pytest.raises(ScoringError, match=message):
        conventions(tok, model, **kwargs)


def test_rejects_a_single_string(model, tok):
    with pytest.raises(TypeError):
        score_texts(model, tok, "abc", progress=False)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_scores_equal_cpu_scores(tok, texts):
    model = make_model(len(tok))
    cpu = score_texts(model, tok, texts, progress=False)
    windows_cpu = score_texts(model, tok, texts, max_length=8, stride=3, progress=False)
    gpu = score_texts(model, tok, texts, device="cuda", progress=False)
    windows_gpu = score_texts(model, tok, texts, max_length=8, stride=3, progress=False)
    assert next(model.parameters()).device.type == "cuda"
    for a, b in zip(cpu + windows_cpu, gpu + windows_gpu):
        assert a.token_ids == b.token_ids
        assert a.token_nats == pytest.approx(b.token_nats, abs=1e-4)
