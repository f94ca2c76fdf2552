"""Training a SentencePiece unigram or BPE model (``train_sentencepiece``): identity
normalisation, byte fallback, deterministic, and an explicit error (or a recorded reduction)
when the corpus cannot support the vocabulary size asked for."""

from __future__ import annotations

import io
import re

from ..core.errors import InputError
from ..core.io import atomic_path
from .spm_model import parse_spm_model, quantize_unigram_scores
from .vocab import BOS, BOS_ID, EOS, EOS_ID, PAD, PAD_ID, UNK, UNK_ID

MODEL_TYPES = ("unigram", "bpe")
# Fixed, not taken from the machine: unigram EM sums per-thread counts in thread order, so
# the thread count may change the model's float scores.
NUM_THREADS = 2

# SentencePiece 0.2.1 raises RuntimeError with these messages (src/trainer_interface.cc):
_TOO_HIGH = re.compile(r"Vocabulary size too high \((\d+)\)\.\s*Please set it to a value <= (\d+)")
_TOO_LOW = re.compile(r"Vocabulary size is smaller than required_chars\.\s*(\d+) vs (\d+)")


def _check_training_input(texts, model_type, vocab_size, character_coverage):
    if model_type not in MODEL_TYPES:
        raise InputError(f"unknown tokenizer model type {model_type!r}: expected one of "
                         f"{', '.join(MODEL_TYPES)}")
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size <= 0:
        raise InputError(f"tokenizer vocabulary size {vocab_size!r}: expected a positive integer")
    if not 0.0 < float(character_coverage) <= 1.0:
        raise InputError(f"character_coverage {character_coverage!r}: expected a number in (0, 1]")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise InputError(f"training unit {i} is {type(text).__name__}: expected str")
        if "\n" in text or "\r" in text:
            raise InputError(f"training unit {i} contains a line break: expected normalised units "
                             f"(fairppl.core.text.normalize)")
    if not any(texts):
        raise InputError("no training text for the tokenizer: expected at least one non-empty unit")


def spm_train(texts: list[str], model_type: str, vocab_size: int, seed: int,
              character_coverage: float) -> bytes:
    """Train once and return the serialized model (nothing is written to disk)."""
    import sentencepiece as spm

    # `seed` is deliberately not passed to spm.set_random_generator_seed: with no sampling and no
    # shuffling the training draws nothing, and sentencepiece 0.2.1's generator is process-wide
    # (seeding it here could change sampling elsewhere in the same process).
    del seed
    longest = max(len(t.encode("utf-8")) for t in texts)
    writer = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(texts),
        model_writer=writer,
        model_type=model_type,
        vocab_size=vocab_size,
        character_coverage=float(character_coverage),
        normalization_rule_name="identity",
        remove_extra_whitespaces=False,
        add_dummy_prefix=True,
        byte_fallback=True,
        unk_id=UNK_ID, bos_id=BOS_ID, eos_id=EOS_ID, pad_id=PAD_ID,
        unk_piece=UNK, bos_piece=BOS, eos_piece=EOS, pad_piece=PAD,
        input_sentence_size=0,
        shuffle_input_sentence=False,
        max_sentence_length=max(4192, longest + 1),  # longer units would be dropped silently
        num_threads=NUM_THREADS,
        minloglevel=2,
    )
    return writer.getvalue()


def _vocab_text(model: bytes) -> str:
    """The ``.vocab`` file SentencePiece writes: one ``piece<TAB>score`` line per id."""
    pieces = parse_spm_model(model)["pieces"]
    return "".join(f"{piece}\t{score:g}\n" for piece, score, _ in pieces)


def train_sentencepiece(texts: list[str], model_type: str, vocab_size: int, out_prefix: str, *,
                        allow_reduction: bool = False, seed: int = 0,
                        character_coverage: float = 1.0) -> dict:
    """Train a SentencePiece ``model_type`` ("unigram" or "bpe") model of ``vocab_size`` pieces on
    ``texts`` (normalised units, one sentence each, used in the given order, all of them) and
    write ``<out_prefix>.model`` and ``<out_prefix>.vocab``, each atomically.

    Settings: identity normalisation (nothing but the whitespace symbol and the dummy prefix),
    byte fallback (open vocabulary), ids ``<unk>``=0 ``<s>``=1 ``</s>``=2 ``<pad>``=3,
    ``NUM_THREADS`` threads, no sentence sampling or shuffling: the same input gives the same
    model bytes (``seed`` is accepted for the config's sake; nothing random happens).
    Unigram scores are then rounded to the ``SCORE_QUANTUM`` grid (``quantize_unigram_scores``).
    ``vocab_size`` counts every piece, the 4 specials and 256 byte pieces included.

    When the corpus cannot support ``vocab_size`` pieces, an ``InputError`` names the requested
    and the largest possible size, unless ``allow_reduction``: then the model is trained with the
    largest possible size and the record says ``reduced: True``. A size below what the corpus's
    characters need (specials + bytes + every character) is always an ``InputError``.

    Returns ``{model_type, vocab_size_requested, vocab_size, reduced, n_train_units,
    n_train_chars}`` (``vocab_size`` = the model's actual size).
    """
    texts = list(texts)
    _check_training_input(texts, model_type, vocab_size, character_coverage)
    n_units, n_chars = len(texts), sum(len(t) for t in texts)
    size = vocab_size
    reduced = False
    for _attempt in range(5):
        try:
            model = spm_train(texts, model_type, size, seed, character_coverage)
            break
        except RuntimeError as err:
            message = str(err)
            high = _TOO_HIGH.search(message)
            low = _TOO_LOW.search(message)
            if high and int(high.group(2)) < size:
                largest = int(high.group(2))
                if not allow_reduction:
                    raise InputError(
                        f"{model_type} tokenizer vocabulary size {vocab_size} is too large for "
                        f"this training text ({n_units} units, {n_chars} characters): it supports "
                        f"at most {largest} pieces. Lower the vocabulary size in the config to "
                        f"<= {largest}, or set tokenizers.allow_vocab_reduction: true to train "
                        f"with {largest} instead") from None
                size, reduced = largest, True
                continue
            if low:
                needed = int(low.group(2))
                raise InputError(
                    f"{model_type} tokenizer vocabulary size {size} is too small for this "
                    f"training text ({n_units} units, {n_chars} characters): it needs at least "
                    f"{needed} pieces (4 special + 256 byte pieces + its distinct characters). "
                    f"Raise the vocabulary size in the config to >= {needed}") from None
            raise
    else:  # pragma: no cover - SentencePiece kept lowering its own maximum
        raise InputError(f"{model_type} tokenizer: SentencePiece kept rejecting the vocabulary "
                         f"size (last tried {size}) for this training text ({n_units} units)")

    if model_type == "unigram":
        model = quantize_unigram_scores(model)
    actual = len(parse_spm_model(model)["pieces"])
    out_prefix = str(out_prefix)
    with atomic_path(out_prefix + ".vocab") as tmp:
        tmp.write_text(_vocab_text(model), encoding="utf-8")
    with atomic_path(out_prefix + ".model", seal=True) as tmp:
        tmp.write_bytes(model)
    return {
        "model_type": model_type,
        "vocab_size_requested": int(vocab_size),
        "vocab_size": actual,
        "reduced": reduced,
        "n_train_units": n_units,
        "n_train_chars": n_chars,
    }
