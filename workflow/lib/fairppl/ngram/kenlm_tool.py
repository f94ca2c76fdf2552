"""KenLM, the study's one external n-gram tool: training (``lmplz`` + ``build_binary``), loading,
and the one scoring loop that the character, word and subword n-grams share.

A token stream (characters, words, SentencePiece pieces) is written one unit per line, tokens
separated by single spaces; ``lmplz`` trains an order-N modified Kneser-Ney model on it, and
``build_binary`` stores the model in KenLM's binary form. Scoring charges every token of a unit
and the end-of-unit symbol ``</s>`` (begin-of-unit context on), in bits. What an unseen token
costs beyond ``-log2 p(<unk> | context)`` is the caller's hook (``score_tokens``): a spell-out for
characters and pieces, nothing (and a consistency check) for the word models' UNK class.

KenLM conventions this module relies on (checked in tests/unit/test_charlm.py,
tests/unit/test_wordlm.py):

* KenLM splits a line into words at ASCII whitespace (lmplz: NUL, TAB, LF, CR, space; the Python
  module: TAB, LF, VT, FF, CR, space); a token must contain none of these.
* KenLM reserves the words ``<s>``, ``</s>`` and ``<unk>`` (``KENLM_RESERVED``); lmplz refuses
  them in its training text.
* Log-probabilities are log10 and stored as float32; each is converted to bits exactly once,
  ``log10_to_bits``, and a unit's bits are summed with ``math.fsum``.
* lmplz gives ``<unk>`` the probability of a zeroton: it shares the interpolation (uniform) mass
  of the unigram distribution, so ``p(<unk>) > 0`` and the distribution over seen tokens +
  ``</s>`` + ``<unk>`` sums to 1 after any context. An ARPA file without ``<unk>`` makes KenLM
  substitute log10 p = -100 (``NO_UNK_LOG10`` detects it: an error, not a score).
* The Python module is the PyPI ``kenlm`` sdist built with ``MAX_ORDER=7`` by the Makefile (its
  default, like prebuilt wheels', is 6); its probing model needs order >= 2. ``lmplz`` and
  ``build_binary`` built by ``build_kenlm.sh`` take up to their ``KENLM_MAX_ORDER``. Binary files
  written by our ``build_binary`` load in the Python module.

Temporary files: training writes the ARPA file (and lmplz's sort buffers) into a private folder
under the caller's temporary directory (the Snakemake job's ``resources.tmpdir``), removed when
training ends, fails, or the process receives SIGTERM (``private_workdir``); the binary model
appears at its final path only when both programs succeeded (``fairppl.core.io.atomic_path``).
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Callable, Iterator, NamedTuple, Sequence

from ..core.errors import InputError
from ..core.integrity import verify
from ..core.io import atomic_path

#: log2(10): a log10-probability times -LOG2_10 is a code length in bits.
LOG2_10 = math.log2(10.0)

#: KenLM's reserved words.
KENLM_RESERVED = ("<s>", "</s>", "<unk>")

#: A log10 p(<unk> | context) below this means the model has no <unk> mass at all: KenLM
#: substitutes log10 p = -100 when an ARPA file lacks <unk>.
NO_UNK_LOG10 = -90.0


def log10_to_bits(log10p: float) -> float:
    """Code length in bits of an event of base-10 log-probability ``log10p`` (<= 0)."""
    return log10p * -LOG2_10


# ---------------------------------------------------------------------------------------------
# training


def lmplz_command(lmplz: str | os.PathLike, order: int, text: str | os.PathLike,
                  arpa: str | os.PathLike, tmpdir: str | os.PathLike, memory: str = "20%",
                  discount_fallback: bool | Sequence[float] = True) -> list[str]:
    """The argv that trains an order-``order`` modified Kneser-Ney model on ``text`` into ``arpa``.

    ``memory`` is lmplz's ``-S`` (e.g. ``"20%"``, ``"2G"``); ``tmpdir`` its ``-T`` (use the rule's
    tmpdir, not /tmp).

    ``discount_fallback``: lmplz estimates each order's discounts from counts-of-counts, which fails
    on tiny corpora (e.g. a 20-verse test set: "could not calculate Kneser-Ney discounts").
    ``True`` passes ``--discount_fallback`` (lmplz's defaults 0.5 1 1.5, used *only* for orders
    where estimation fails, so it changes nothing on a normal corpus); a sequence of three floats
    passes those fallback discounts; ``False`` omits the flag, so lmplz fails loudly instead.
    """
    order = int(order)
    if order < 2:
        raise InputError(f"n-gram order must be at least 2 (KenLM's query model needs a bigram), got {order}")
    argv = [str(lmplz), "-o", str(order), "-S", str(memory), "-T", str(tmpdir)]
    if discount_fallback is True:
        argv.append("--discount_fallback")
    elif discount_fallback is not False:
        values = [float(d) for d in discount_fallback]
        if len(values) != 3 or any(not (0 < d) for d in values):
            raise InputError(f"discount_fallback needs three positive discounts (D1 D2 D3+), got {values}")
        argv += ["--discount_fallback", *(repr(d) for d in values)]
    argv += ["--text", str(text), "--arpa", str(arpa)]
    return argv


def build_binary_command(build_binary: str | os.PathLike, arpa: str | os.PathLike,
                         model: str | os.PathLike) -> list[str]:
    """The argv that stores ``arpa`` as KenLM's binary (probing) model ``model``."""
    return [str(build_binary), "-S", "1G", str(arpa), str(model)]


def _raise_on_sigterm(signum, _frame):
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def private_workdir(tmpdir: str | os.PathLike) -> Iterator[Path]:
    """A fresh folder under ``tmpdir`` (created if missing), removed with its contents when the
    block ends, fails, or the process receives SIGTERM.

    Python's default SIGTERM action ends the process without running ``finally`` blocks, so a
    job killed by Snakemake (or a scheduler) would leave the training text and ARPA file behind.
    In the main thread the block therefore turns SIGTERM into ``SystemExit(143)``; the previous
    handler is restored afterwards. SIGKILL cannot be caught: a folder named ``kenlm-*`` may then
    remain in ``tmpdir`` (Snakemake's default tmpdir is the system's temporary folder).
    """
    Path(tmpdir).mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="kenlm-", dir=tmpdir))
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _raise_on_sigterm) if main else None
    try:
        yield work
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)
        shutil.rmtree(work, ignore_errors=True)


def _run(argv: list[str], log) -> None:
    if log is not None:
        print("+", " ".join(argv), file=log, flush=True)
    # On any exception (SIGTERM included, see private_workdir) subprocess.run kills the child.
    subprocess.run(argv, check=True, stdout=log if log is not None else subprocess.DEVNULL,
                   stderr=subprocess.STDOUT)


def train_model(text: str | os.PathLike, model: str | os.PathLike, *, order: int,
                lmplz: str | os.PathLike, build_binary: str | os.PathLike,
                tmpdir: str | os.PathLike, memory: str = "20%",
                discount_fallback: bool | Sequence[float] = True, log=None) -> None:
    """Train an order-``order`` model on ``text`` (lmplz) and write KenLM's binary form to
    ``model`` (build_binary), sealed (its digest recorded beside it, checked by ``load_model``).

    The ARPA file and lmplz's temporary files live in a ``private_workdir`` under ``tmpdir``,
    removed afterwards whatever happens; ``model`` appears only if both programs succeed (nothing,
    not even a ``.part`` file, is left beside it otherwise).

    ``log``: an open text file that receives the commands and the programs' output (stderr is
    merged); None discards them. A failing program raises ``subprocess.CalledProcessError``.
    """
    with private_workdir(tmpdir) as work:
        arpa = work / "model.arpa"
        _run(lmplz_command(lmplz, order, text, arpa, work, memory=memory,
                           discount_fallback=discount_fallback), log)
        with atomic_path(model, seal=True) as tmp:
            _run(build_binary_command(build_binary, arpa, tmp), log)


# ---------------------------------------------------------------------------------------------
# loading and scoring


def load_model(model_path: str | os.PathLike):
    """Load an ARPA or KenLM binary file with the Python module (quietly); a model whose bytes
    changed since ``train_model`` wrote it raises ``CorruptFileError`` (see
    ``fairppl.core.integrity``)."""
    import kenlm

    verify(model_path)
    config = kenlm.Config()
    config.show_progress = False
    return kenlm.Model(str(model_path), config)


class Charged(NamedTuple):
    """The cost of one token sequence (bits).

    bits_model: ``-log2 p`` of every token (unseen ones as ``<unk>``) and of ``</s>``.
    bits_unseen: what the hook added for unseen tokens (e.g. a spell-out).
    n_unseen: tokens KenLM flagged as out of its vocabulary.
    bits_eos: ``-log2 p(</s> | context)``, the end-of-unit charge (part of bits_model).
    """

    bits_model: float
    bits_unseen: float
    n_unseen: int
    bits_eos: float

    @property
    def bits(self) -> float:
        """The sequence's code length: ``bits_model + bits_unseen``."""
        return self.bits_model + self.bits_unseen


def score_tokens(model, tokens: Sequence[str], charge_unseen: Callable[[str], float],
                 describe: Callable[[str], str] = repr) -> Charged:
    """Score one token sequence under a loaded ``kenlm.Model`` (begin- and end-of-unit context on).

    Every token and the end-of-unit symbol ``</s>`` cost ``-log2 p`` bits; a token the model never
    saw (KenLM's OOV flag) costs ``-log2 p(<unk> | context)`` plus ``charge_unseen(token)`` bits,
    the hook that says how an unseen token is charged (it may raise ValueError to refuse one).
    ``describe`` names a token in error messages.

    Raises ValueError for a non-finite log-probability, or an unseen token when the model has no
    ``<unk>`` mass; RuntimeError if KenLM's scores do not match the tokens.
    """
    tokens = list(tokens)
    scores = list(model.full_scores(" ".join(tokens), bos=True, eos=True))
    if len(scores) != len(tokens) + 1:
        raise RuntimeError(
            f"KenLM returned {len(scores)} scores for {len(tokens)} tokens + </s>: {tokens[:20]!r}")
    model_bits = []
    unseen_bits = []
    for i, (log10p, _ngram_len, oov) in enumerate(scores):
        if not math.isfinite(log10p):
            what = "</s>" if i == len(tokens) else describe(tokens[i])
            raise ValueError(f"KenLM gave a non-finite log-probability ({log10p}) to {what} "
                             f"at position {i} of {tokens[:20]!r}")
        if oov:
            if i == len(tokens):
                raise RuntimeError("KenLM flagged </s> as out of vocabulary")
            if log10p < NO_UNK_LOG10:
                raise ValueError(
                    f"the model gives no probability to unseen tokens (log10 p(<unk>) = {log10p}; "
                    f"KenLM substitutes -100 when the ARPA file has no <unk>): cannot score "
                    f"{describe(tokens[i])} at position {i} of {tokens[:20]!r}")
            unseen_bits.append(charge_unseen(tokens[i]))
        model_bits.append(log10_to_bits(log10p))
    return Charged(math.fsum(model_bits), math.fsum(unseen_bits), len(unseen_bits), model_bits[-1])
