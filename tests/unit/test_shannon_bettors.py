"""fairppl.shannon.bettors: the study's models as bettors in the Shannon game.

Transformer bettors (a tiny random Llama cast to float64, over three tokenizer families: the
study's character tokenizer, a SentencePiece unigram model converted like the study's, a GPT-2
style byte-level BPE): every word's bet against a brute-force computation (one plain forward of
start + context + word, no tree, no cache), sums of bets, and the telescoping identity (the
log_probs of a unit's exhaustive truncations sum to the likelihood of the unit, so the exhaustive
gambling perplexity is the likelihood perplexity). The KenLM word bettor against the study's
naive word score (``score_word_unit``) on a model trained here with lmplz."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fairppl.core.errors import InputError  # noqa: E402
from fairppl.ngram.word import words as split_words  # noqa: E402
from fairppl.shannon.bettors import (ContextByContext, TokenBettor, WordNgramBettor,  # noqa: E402
                                     records_maker, truncation_rows,
                                     truncation_rows_many)
from fairppl.shannon.gambling import gambling_perplexity  # noqa: E402
from fairppl.shannon.neural import concatenation_holds  # noqa: E402
from fairppl.shannon.outcomes import END_OUTCOME, UNK_OUTCOME, build_outcomes  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

WORDS = ("the lord god light earth heaven waters beginning created said, darkness was upon face "
         "deep spirit moved divided called day night evening morning first second Lo! it's "
         "be-gat 12 naïve").split()


def sentences(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 7))) for _ in range(n)]


TRAIN = sentences(200, 1)
OUTCOMES = build_outcomes(TRAIN, 20)  # 20 of the 29 words: the rest is out of vocabulary
UNITS = sentences(6, 2) + ["the", ""]


def _char_tokenizer():
    from fairppl.tokenizers import char_tokenizer

    return char_tokenizer(TRAIN[:50])  # "ï" is unseen: spelled by byte tokens


def _spm_tokenizer(tmp_path_factory):
    from fairppl.tokenizers import to_hf_tokenizer, train_sentencepiece

    work = tmp_path_factory.mktemp("spm")
    train_sentencepiece(TRAIN * 2, "unigram", 300, str(work / "spm"), allow_reduction=True)
    return to_hf_tokenizer(str(work / "spm.model"))


def _byte_level_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=330, special_tokens=["<unk>", "<s>", "</s>",
                                                                 "<pad>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    backend.train_from_iterator(TRAIN, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<s>", eos_token="</s>",
                                   pad_token="<pad>", unk_token="<unk>")


@pytest.fixture(scope="module", params=["char", "spm", "byte-level"])
def tiny(request, tmp_path_factory):
    """A tiny random Llama in float64 over one tokenizer family, as a TokenBettor."""
    from fairppl.marginal.vocab import vocab_from_hf
    from fairppl.neural import NeuralConfig, build_model, special_ids_of
    from fairppl.tokenizers import vocab_size
    from fairppl.tokenlm.lm_hf import HFTokenLM

    tok = {"char": _char_tokenizer, "byte-level": _byte_level_tokenizer,
           "spm": lambda: _spm_tokenizer(tmp_path_factory)}[request.param]()
    special = special_ids_of(tok)
    cfg = NeuralConfig(d_model=16, n_layers=2, n_heads=2, d_ff=32, context=256, seed=7)
    model = build_model(cfg, vocab_size(tok), special["bos"], special["eos"], special["pad"])
    model = model.to(torch.float64).eval()

    def encode(text):
        return tok(text, add_special_tokens=False, split_special_tokens=True)["input_ids"]

    lm = HFTokenLM(model, tok, pass_tokens=37)  # small passes: trees split across passes
    return TokenBettor(lm, vocab_from_hf(tok), encode, OUTCOMES), model, tok, encode


def _boundary_ids(tok) -> list[int]:
    """Tokens whose surface starts a word, read off the token strings (not the bettor's bytes):
    the space marker of each family, the byte piece of a space, and the end token."""
    ids = [i for t, i in tok.get_vocab().items()
           if t.startswith(("▁", "Ġ", " ")) or t == "<0x20>"]
    return sorted(set(ids) | {tok.eos_token_id})


def _brute_log_bet(model, tok, ctx_ids, word_ids, first: bool) -> float:
    """ln bet by one plain forward of start + context + word (float64)."""
    ids = [tok.bos_token_id, *ctx_ids, *word_ids]
    with torch.inference_mode():
        rows = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0], dim=-1)
    bound = torch.tensor(_boundary_ids(tok))
    n = len(ctx_ids)
    lp = sum(float(rows[n + j, t]) for j, t in enumerate(word_ids))
    after = float(torch.logsumexp(rows[-1, bound], 0))
    before = 0.0 if first else float(torch.logsumexp(rows[n, bound], 0))
    return lp + after - before


def _brute_log_end(model, tok, ctx_ids, first: bool) -> float:
    ids = [tok.bos_token_id, *ctx_ids]
    with torch.inference_mode():
        row = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0, -1], dim=-1)
    before = 0.0 if first else float(torch.logsumexp(row[torch.tensor(_boundary_ids(tok))], 0))
    return float(row[tok.eos_token_id]) - before


def test_every_bet_equals_a_brute_force_forward(tiny):
    bettor, model, tok, encode = tiny
    unit = "the lord said, Lo! naïve"
    ws = split_words(unit)
    for k in range(len(ws) + 1):
        ctx = ws[:k]
        ctx_ids = bettor.tokens.context(ctx)
        log_bets = bettor.log_bets(ctx)
        bets = bettor.bets(ctx)
        for i, w in enumerate(OUTCOMES.words):
            word_ids = encode(w) if k == 0 or bettor.tokens.vocab.prefix_space == "always" \
                else encode(" " + w)
            want = _brute_log_bet(model, tok, ctx_ids, word_ids, k == 0)
            assert log_bets[i] == pytest.approx(want, abs=1e-10), (k, w)
        want_end = _brute_log_end(model, tok, ctx_ids, k == 0)
        assert log_bets[OUTCOMES.end] == pytest.approx(want_end, abs=1e-10)
        listed = math.fsum(np.delete(bets, OUTCOMES.unk).tolist())
        assert 0 < listed <= 1
        assert bets[OUTCOMES.unk] == pytest.approx(1 - listed, abs=1e-15)
        assert math.fsum(bets.tolist()) == pytest.approx(1.0, abs=1e-12)
        # the actual next word: a vocabulary word's log_prob is its bet; an OOV word has its own
        if k < len(ws):
            got = bettor.log_prob(ctx, ws[k])
            word_ids = bettor.tokens(ws[k], k == 0)
            assert got == pytest.approx(_brute_log_bet(model, tok, ctx_ids, word_ids, k == 0),
                                        abs=1e-10)
            if ws[k] in OUTCOMES.index:
                assert got == log_bets[OUTCOMES.index[ws[k]]]
            else:
                assert got < log_bets[OUTCOMES.unk]  # one of the words <unk> pools


def test_exhaustive_log_probs_sum_to_the_canonical_likelihood(tiny):
    """The telescoping identity, on units whose canonical tokenization is the concatenation of
    their words' tokens: sum of log_prob == the canonical log-likelihood (start + tokens + end),
    float64; and against the study's scorer (float32 log-softmax) to float32 rounding."""
    from fairppl.lm.scoring import score_texts

    bettor, model, tok, encode = tiny
    for text in UNITS:
        assert concatenation_holds(encode, bettor.tokens, text), text
        rows = truncation_rows(bettor, "u", text, OUTCOMES, [1, 5, OUTCOMES.m])
        assert len(rows) == len(split_words(text)) + 1
        assert [r["position"] for r in rows] == list(range(len(rows)))
        assert rows[-1]["outcome"] == END_OUTCOME
        total = math.fsum(r["log_prob"] for r in rows)
        want = float(bettor.lm.logp([encode(text)])[0])
        assert total == pytest.approx(want, rel=1e-9, abs=1e-12)
        ref = score_texts(model, tok, [text], progress=False)[0]
        assert ref.lossless and -ref.nats == pytest.approx(total, rel=1e-6)
        for r in rows:
            if r["in_vocabulary"]:
                assert r["log_bet"] == pytest.approx(r["log_prob"], rel=1e-13, abs=1e-13)
            else:
                assert r["outcome"] == UNK_OUTCOME and r["log_bet"] > r["log_prob"]
            assert r[f"listed_sum_{OUTCOMES.m}"] == pytest.approx(1.0, abs=1e-12)
            if r["rank"] == 1:
                assert r["listed_sum_1"] == pytest.approx(math.exp(r["log_bet"]), rel=1e-12)
        assert sum(r["cost_positions"] for r in rows) >= len(rows)
        assert sum(r["cost_passes"] for r in rows) >= 1


def test_prefetched_truncations_equal_the_context_by_context_bets(tiny):
    """truncation_rows computes a unit's truncations in one session call
    (TokenBettor.prefetch, MassKVTree.logp_next_masses_many; each context's tries in rows of their
    own): every row's bets, log_prob (out-of-vocabulary words included) and list sums equal the
    context-by-context path's within 1e-12 (float64), in passes of a small or an unbounded
    number of positions; unbounded, in two passes where the other path takes one per
    truncation; and the shared cost adds up to what the call took."""
    bettor, *_ = tiny
    units = UNITS + ["the lord said unto naïveté, be-gat day"]
    default = bettor.session.pass_tokens
    for text, big in zip(units, [True, False] * len(units)):
        bettor.session.pass_tokens = 1 << 20 if big else default
        slow = truncation_rows(ContextByContext(bettor), "u", text, OUTCOMES, [1, 5, OUTCOMES.m])
        calls0, pos0 = bettor.lm.calls, bettor.lm.positions
        fast = truncation_rows(bettor, "u", text, OUTCOMES, [1, 5, OUTCOMES.m])
        bettor.session.pass_tokens = default
        assert sum(r["cost_passes"] for r in fast) == bettor.lm.calls - calls0
        assert sum(r["cost_positions"] for r in fast) == bettor.lm.positions - pos0
        if big:  # the contexts' new positions, then every tree: two passes
            assert sum(r["cost_passes"] for r in fast) <= 2
            assert sum(r["cost_passes"] for r in slow) >= len(slow) - 1  # (one may be cached)
        for a, b in zip(slow, fast):
            assert (a["outcome"], a["rank"], a["n_tied"]) == (b["outcome"], b["rank"], b["n_tied"])
            for key in ("log_bet", "log_prob", "listed_sum_5", f"listed_sum_{OUTCOMES.m}"):
                assert b[key] == pytest.approx(a[key], abs=1e-12, rel=0), key
    assert any(r["outcome"] == UNK_OUTCOME for r in fast)


def _check_shannon_setting(root, key: str, good, bad) -> None:
    """The config schema's ``shannon.<key>`` takes ``good`` and refuses ``bad``."""
    import jsonschema
    import yaml

    schema = yaml.safe_load((root / "workflow/schemas/config.schema.yaml").read_text())
    sub = schema["properties"]["shannon"]["properties"][key]
    jsonschema.validate(good, sub)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, sub)


def test_pass_tokens_setting_reaches_the_bettors_passes(tiny, tmp_path):
    """workflow/scripts/shannon_bets.py builds a token bettor whose forward passes hold
    shannon.pass_tokens new positions (read from the run's config; 1024 without it), and the
    schema refuses a value below 64."""
    import runpy
    from pathlib import Path
    from types import SimpleNamespace

    bettor, model, tok, _ = tiny
    if not hasattr(tok, "save_pretrained"):
        pytest.skip("this tokenizer family is not saved as a folder")
    folder = tmp_path / "model"
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    root = Path(__file__).resolve().parents[2]
    script = runpy.run_path(str(root / "workflow" / "scripts" / "shannon_bets.py"))

    class Params(SimpleNamespace):
        def get(self, key, default=None):
            return getattr(self, key, default)

    for config, want in (({"shannon": {"pass_tokens": 77}}, 77), ({}, 1024)):
        smk = SimpleNamespace(params=Params(load_from=str(folder), special=None), threads=1,
                              config=config)
        made, _ = script["make_bettor"]("transformer", smk, OUTCOMES, [], [])
        assert made.session.pass_tokens == want
    _check_shannon_setting(root, "pass_tokens", good=2048, bad=10)


def test_units_of_one_call_share_its_passes_and_keep_their_bets(tiny):
    """truncation_rows_many computes several units' truncations in one prefetch: every row
    equals the unit's own truncation_rows within 1e-12 (float64), contexts asked by several
    units (the empty one; two units opening with the same out-of-vocabulary word) are run once
    with every word asked after them, the call takes fewer passes than a call per unit, and the
    shared cost adds up to the call's. Without a prefetch the rows are the same."""
    bettor, *_ = tiny
    oov = [w for w in WORDS if w not in OUTCOMES.index]
    units = [(f"a{i}", t) for i, t in enumerate(
        [f"{oov[0]} the lord", f"{oov[0]} the day night", f"{oov[1]} said", "the lord said",
         "", "the"] + UNITS[:3])]
    lengths = [1, 5, OUTCOMES.m]
    default = bettor.session.pass_tokens
    bettor.session.pass_tokens = 64
    try:
        alone, passes_alone = [], 0
        for uid, text in units:
            calls0 = bettor.lm.calls
            alone.append(truncation_rows(bettor, uid, text, OUTCOMES, lengths))
            passes_alone += bettor.lm.calls - calls0
        calls0, pos0 = bettor.lm.calls, bettor.lm.positions
        together = truncation_rows_many(bettor, units, OUTCOMES, lengths)
        calls, positions = bettor.lm.calls - calls0, bettor.lm.positions - pos0
        by_context = truncation_rows_many(ContextByContext(bettor), units, OUTCOMES, lengths)
    finally:
        bettor.session.pass_tokens = default
    assert calls < passes_alone
    # every context once, every word after it served without another LM call
    contexts = [split_words(t)[:k] for _, t in units for k in range(len(split_words(t)) + 1)]
    words = [w for _, t in units for w in split_words(t) + [END_OUTCOME]]
    bettor.prefetch(contexts, words)
    assert len(bettor._ready) == len({tuple(c) for c in contexts}) < len(contexts)
    calls0 = bettor.lm.calls
    for ctx, word in zip(contexts, words):
        bettor.log_prob(ctx, word)
    assert bettor.lm.calls == calls0
    flat = [r for rows in together for r in rows]
    assert sum(r["cost_passes"] for r in flat) == calls
    assert sum(r["cost_positions"] for r in flat) == positions
    assert [[r["unit_id"] for r in rows] for rows in together] == [
        [uid] * (len(split_words(text)) + 1) for uid, text in units]
    assert together[0][0]["outcome"] == together[1][0]["outcome"] == UNK_OUTCOME
    for ref in (alone, by_context):
        for rows_a, rows_b in zip(ref, together):
            assert len(rows_a) == len(rows_b)
            for a, b in zip(rows_a, rows_b):
                assert (a["position"], a["outcome"], a["rank"]) == (b["position"], b["outcome"],
                                                                    b["rank"])
                for key in ("log_bet", "log_prob", "listed_sum_5", f"listed_sum_{OUTCOMES.m}"):
                    assert b[key] == pytest.approx(a[key], abs=1e-12, rel=0), key


def test_units_per_call_setting_groups_the_bettors_calls(tiny, tmp_path):
    """workflow/scripts/shannon_bets.py hands the token bettor shannon.units_per_call units per
    call (1 without the setting), appends every unit's record, and a rerun computes nothing;
    the schema refuses 0."""
    import runpy
    from pathlib import Path

    from fairppl.core.runner import read_done, run_documents

    bettor, *_ = tiny
    root = Path(__file__).resolve().parents[2]
    script = runpy.run_path(str(root / "workflow" / "scripts" / "shannon_bets.py"))
    assert script["units_per_call"]({}) == 1
    per_call = script["units_per_call"]({"shannon": {"units_per_call": 2}})
    assert per_call == 2
    texts = UNITS[:5]
    ids = [f"u{i}" for i in range(5)]
    groups = []

    class Counting(ContextByContext):  # the bettor, its prefetch counted
        def prefetch(self, contexts, words):
            groups.append(sum(1 for c in contexts if not c))  # one empty context per unit
            return self.inner.prefetch(contexts, words)

    part = tmp_path / "part.jsonl"
    make = records_maker(Counting(bettor), OUTCOMES, [1], per_call)
    assert run_documents(texts, ids, None, part, progress=False, make_records=make) == 5
    assert groups == [2, 2, 1]
    done = read_done(part, ids)
    for uid, text in zip(ids, texts):
        want = truncation_rows(bettor, uid, text, OUTCOMES, [1])
        assert [r["log_bet"] for r in done[uid]["rows"]] == pytest.approx(
            [r["log_bet"] for r in want], abs=1e-12, rel=0)
    assert run_documents(texts, ids, None, part, progress=False, make_records=make) == 0
    assert groups == [2, 2, 1]
    _check_shannon_setting(root, "units_per_call", good=8, bad=0)


def test_every_bettor_class_is_a_bettor():
    """Every class of fairppl.shannon that bets is a protocol.Bettor, none left abstract, each
    of the five methods the game asks taking the base class's arguments; the game's code and
    scripts ask no bettor whether it has a method; a class without bets cannot be built."""
    import importlib
    import inspect
    import pkgutil
    from pathlib import Path

    import fairppl.shannon as package
    from fairppl.shannon.protocol import Bettor

    found = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and cls is not Bettor and all(
                    callable(getattr(cls, m, None)) for m in ("bets", "log_prob")):
                found[name] = cls
    assert sorted(found) == ["BigramBettor", "ContextByContext", "TokenBettor",
                             "WordNgramBettor"]
    for name, cls in found.items():
        assert issubclass(cls, Bettor) and not cls.__abstractmethods__, name
        for method in ("bets", "log_prob", "take_cost", "prefetch", "fits"):
            mine = list(inspect.signature(getattr(cls, method)).parameters)
            assert mine == list(inspect.signature(getattr(Bettor, method)).parameters), \
                (name, method)
    root = Path(__file__).resolve().parents[2]
    sources = [*(root / "workflow" / "lib" / "fairppl" / "shannon").glob("*.py"),
               *(root / "workflow" / "scripts").glob("shannon*.py")]
    assert len(sources) > 10
    probing = [p.name for p in sources if "hasattr(" in p.read_text(encoding="utf-8")]
    assert probing == []

    class NoBets(Bettor):
        def log_prob(self, context_words, word):
            return 0.0

        def take_cost(self):
            return {}

    with pytest.raises(TypeError, match="bets"):
        NoBets()


def test_exhaustive_gambling_perplexity_is_the_likelihood_perplexity(tiny):
    bettor, _, _, encode = tiny
    units = [u for u in sentences(40, 5) if all(w in OUTCOMES.index for w in split_words(u))]
    assert len(units) >= 3
    log_bets, n = [], 0
    total = 0.0
    for i, text in enumerate(units):
        rows = truncation_rows(bettor, str(i), text, OUTCOMES, [1])
        log_bets += [r["log_bet"] for r in rows]
        total += float(bettor.lm.logp([encode(text)])[0])
        n += len(rows)
    gambling = gambling_perplexity(log_bets)
    likelihood = math.exp(-total / n)
    assert abs(gambling / likelihood - 1) < 1e-9


def test_tree_and_work_counts(tiny):
    """A truncation after the first runs the words' tree once plus the context's last token;
    the context's earlier positions stay stored."""
    bettor, *_ = tiny
    later = {t[:j] for t in bettor._later for j in range(1, len(t) + 1)}
    bettor.bets(["day"])
    bettor.bets(["the"])  # computed now (not the cached context of an earlier test)
    bettor.take_cost()
    word = OUTCOMES.words[3]
    bettor.bets(["the", word])  # a vocabulary word: its tokens are stored
    cost = bettor.take_cost()
    assert cost["cost_positions"] == len(later) + 1
    assert cost["cost_passes"] == math.ceil(cost["cost_positions"] / 37)


def test_units_beyond_the_window_are_refused(tiny):
    bettor, *_ = tiny
    long = " ".join(["beginning"] * 300)
    assert bettor.lm.max_length == 256
    assert bettor.fits("the lord said,") and not bettor.fits(long)
    assert bettor.depth([]) == 1 + max(map(len, bettor._first))
    with pytest.raises(InputError, match="300 words .* beyond the model's window of 256"):
        bettor.bets(split_words(long))


def test_bad_words_are_refused(tiny):
    bettor, *_ = tiny
    with pytest.raises(InputError, match="outcome, not a word"):
        bettor.log_prob(["the"], UNK_OUTCOME)


# ---------------------------------------------------------------------------------------------
# the KenLM word n-gram


@pytest.fixture(scope="module")
def word_ngram(tmp_path_factory, resources_ready):
    """A 3-gram over the 20-word vocabulary of TRAIN (UNK = <oov>), trained with lmplz, and its
    record, as the workflow writes them."""
    import json

    from fairppl.ngram.kenlm_tool import train_model
    from fairppl.ngram.training_text import write_stream

    work = tmp_path_factory.mktemp("wordlm")
    fields = write_stream("word-v20", TRAIN, work / "train.txt")
    binary = resources_ready["FAIRPPL_KENLM_BIN"]
    train_model(work / "train.txt", work / "word-v20.o3.kenlm", order=3, lmplz=binary / "lmplz",
                build_binary=binary / "build_binary", tmpdir=work / "tmp")
    (work / "word-v20.o3.json").write_text(json.dumps({"stream": "word-v20", **fields}),
                                           encoding="utf-8")
    return work / "word-v20.o3.kenlm"


def test_word_ngram_bets_and_the_naive_word_score(word_ngram):
    from fairppl.ngram.kenlm_tool import load_model
    from fairppl.ngram.word import UNK, score_word_unit

    bettor = WordNgramBettor(word_ngram, OUTCOMES)
    model = load_model(word_ngram)
    for text in UNITS + sentences(20, 9):
        rows = truncation_rows(bettor, "u", text, OUTCOMES, [1, 3])
        total = math.fsum(r["log_prob"] for r in rows)
        want = score_word_unit(model, text, set(OUTCOMES.words)).bits * math.log(2)
        assert -total == pytest.approx(want, rel=1e-9, abs=1e-12)
    # one context by hand: p(w | <s> the <oov>) for every outcome, through KenLM's scorer
    oov = next(w for w in WORDS if w not in OUTCOMES.index)
    ctx = ["the", oov]
    bets = bettor.bets(ctx)
    for i, w in enumerate(OUTCOMES.words + ("</s>",)):
        i = OUTCOMES.end if w == "</s>" else i
        line = f"the {UNK} {w}" if w != "</s>" else f"the {UNK}"
        log10 = list(model.full_scores(line, bos=True, eos=w == "</s>"))[-1][0]
        assert bets[i] == pytest.approx(10.0 ** log10, rel=1e-12)
    rest = 1 - math.fsum(np.delete(bets, OUTCOMES.unk).tolist())
    assert bets[OUTCOMES.unk] == pytest.approx(rest, rel=1e-12)
    p_oov = 10.0 ** list(model.full_scores(f"the {UNK} {UNK}", bos=True, eos=False))[-1][0]
    assert bettor.log_prob(ctx, "zebra") == pytest.approx(math.log(p_oov), rel=1e-12)
    assert p_oov < bets[OUTCOMES.unk]  # <unk> also holds KenLM's zeroton <unk> mass


def test_word_ngram_refuses_other_outcomes(word_ngram):
    from fairppl.shannon.outcomes import Outcomes

    with pytest.raises(InputError, match="hold 10 vocabulary words .* vocabulary of 20"):
        WordNgramBettor(word_ngram, build_outcomes(TRAIN, 10))
    with pytest.raises(InputError, match="vocabulary of 20 .*other words"):
        WordNgramBettor(word_ngram, Outcomes(tuple(reversed(OUTCOMES.words))))
    with pytest.raises(InputError, match="no record"):
        WordNgramBettor(word_ngram.with_name("x.kenlm"), OUTCOMES)
