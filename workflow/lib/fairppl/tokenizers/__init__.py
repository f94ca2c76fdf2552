"""Per-language tokenizers: SentencePiece unigram/BPE models and a character tokenizer, all open
vocabulary, all usable as ``transformers`` fast tokenizers.

Conventions (checked in tests/unit/test_tokenizers.py):

* Input is a list of normalised units (``fairppl.core.text.normalize``: NFC, single ASCII spaces, no
  leading/trailing space). The tokenizers change nothing else in the text: SentencePiece is
  trained with ``normalization_rule_name="identity"`` and ``remove_extra_whitespaces=False``, so
  the only transformation is SentencePiece's own whitespace handling (every space becomes
  ``"▁"`` and one dummy ``"▁"`` is prepended to a non-empty unit).
* Open vocabulary: every model has the 256 byte pieces ``<0x00>`` ... ``<0xFF>``
  (``byte_fallback=True``); a character the model cannot spell otherwise (unseen in training) is
  encoded as the pieces of its UTF-8 bytes, so no unit ever yields ``<unk>`` and every character
  is charged.
* Special ids, the same in every tokenizer here: ``<unk>`` = 0, ``<s>`` = 1, ``</s>`` = 2,
  ``<pad>`` = 3; SentencePiece's byte pieces follow at 4..259 and the character tokenizer puts
  its byte tokens there too.
* The ``transformers`` tokenizers **never add special tokens**: they have no post-processor, so
  ``tokenizer(text)["input_ids"]`` with or without ``add_special_tokens`` is the bare piece
  sequence. The scoring code adds ``<s>``/``</s>`` itself (``bos_token_id``/``eos_token_id``).
  Literal text such as ``"<s>"`` is spelled as ordinary characters, never turned into a special
  id (``split_special_tokens=True``), as in SentencePiece.
* ``decode(encode(x)) == x`` for every normalised unit (decode with
  ``clean_up_tokenization_spaces=False``, which these tokenizers also set as their default). The
  one exception is SentencePiece's: a literal ``"▁"`` (U+2581) in the text decodes as a space.
* Unigram piece scores are rounded to multiples of 2**-8 after training
  (``quantize_unigram_scores``): SentencePiece adds path scores in float32, so segmentations of
  equal score (``000|0`` vs ``0|000``) were otherwise ranked by rounding noise that no other
  implementation reproduces (3 of 31,102 German Bible verses differed at 8,000 pieces). On the
  grid, sums are exact and ties go to the same path everywhere. The ``.model`` file holds the
  rounded scores, so SentencePiece, ``to_hf_tokenizer`` and any lattice code read one model.
* ``to_hf_tokenizer`` reproduces ``SentencePieceProcessor.encode`` id for id (tested on every
  unit of real text, and on literal ``"<s>"``, ``"<unk>"``, ``"<0x41>"``). One theoretical limit
  remains for BPE: two *different* splits of one piece that overlap (``ab|a`` and ``a|ba`` over
  the symbols ``ab a ba``) are merged by SentencePiece leftmost first, by ``tokenizers`` in merge
  rank order; the splits of a piece are ranked longer left part first, which is leftmost-first
  whenever the left symbol is the longer one.

Modules: ``vocab`` (the shared special and byte tokens), ``training`` (``train_sentencepiece``),
``spm_model`` (reading a ``.model``, ``quantize_unigram_scores``), ``hf`` (the ``transformers``
wrapper, ``tokenize_units``, ``vocab_size``), ``convert`` (``to_hf_tokenizer``), ``char``
(``char_tokenizer``). The public names are imported here:
``from fairppl.tokenizers import train_sentencepiece``; a constant is read where it is defined,
so a test that changes one (``SCORE_QUANTUM``) sets it in its module (``spm_model``).
"""

from __future__ import annotations

from .char import char_tokenizer
from .convert import to_hf_tokenizer
from .hf import tokenize_units, vocab_size
from .spm_model import (BYTE, CONTROL, NORMAL, SCORE_QUANTUM, UNKNOWN, UNUSED, USER_DEFINED,
                        parse_spm_model, quantize_unigram_scores)
from .training import MODEL_TYPES, NUM_THREADS, train_sentencepiece
from .vocab import (BOS, BOS_ID, BYTE_TOKENS, EOS, EOS_ID, PAD, PAD_ID, SPACE, SPECIALS, UNK,
                    UNK_ID)

__all__ = [
    "BOS", "BOS_ID", "BYTE", "BYTE_TOKENS", "CONTROL", "EOS", "EOS_ID", "MODEL_TYPES", "NORMAL",
    "NUM_THREADS", "PAD", "PAD_ID", "SCORE_QUANTUM", "SPACE", "SPECIALS", "UNK", "UNK_ID",
    "UNKNOWN", "UNUSED", "USER_DEFINED", "char_tokenizer", "parse_spm_model",
    "quantize_unigram_scores", "to_hf_tokenizer", "tokenize_units", "train_sentencepiece",
    "vocab_size",
]
