"""Command-line entry point: run one estimator on one file without Snakemake.

    fairppl char-ngram --model char.o5.kenlm --text units.txt [--english english.txt]
    fairppl marginal --model DIR --texts FILE --estimator NAME --out FILE.jsonl
    fairppl campaign truncations|score ...

The first reads one unit per line (normalised as the pipeline does), scores every character and
the end of each unit, and prints bits per utterance, bits per character and per byte (and BPEC
when the aligned English file is given); the second is :mod:`fairppl.cli.marginal`, the third
:mod:`fairppl.cli.campaign` (the Shannon game's campaign files and scorer).

Input that would make these numbers meaningless is refused with a message naming the file (and
the line) and exit status 2: a missing or empty file, an empty or whitespace-only unit (it would
be charged only its end-of-unit symbol and lower every rate), a model that is not a character
model (a word or subword n-gram scores a character stream as a run of unknown tokens), English
units that do not align.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..core.errors import InputError
from .common import read_units

# Tokens only a word model (the UNK class of fairppl.ngram.word) has in its vocabulary.
_WORD_MODEL_TOKENS = ("<oov>",)


def check_char_model(model, model_path: str, units: list[str]) -> None:
    """Refuse a KenLM model that is not a character model: the record that train_ngram writes
    beside it names another stream, or its vocabulary holds a word-model token or a
    multi-character token of the text (a character model's words are single characters)."""
    record = Path(model_path).with_suffix(".json")
    if record.exists():
        try:
            stream = json.loads(record.read_text(encoding="utf-8")).get("stream")
        except (ValueError, AttributeError):
            stream = None
        if stream not in (None, "char"):
            raise InputError(f"the model's record {record} says stream {stream!r}; expected a "
                             f"character model (stream 'char', e.g. char.o5.kenlm)", path=model_path)
    from ..ngram.char import SPACE

    candidates = set(_WORD_MODEL_TOKENS)
    for unit in units:
        for word in unit.split(" "):
            if len(word) > 1:
                candidates.update((word, SPACE + word))
    known = sorted(token for token in candidates if token in model)
    if known:
        raise InputError(f"the model's vocabulary holds the multi-character token(s) {known[:5]}: "
                         f"a word or subword n-gram; expected a character model (one KenLM word "
                         f"per character)", path=model_path)


def _load_model(path: str):
    from ..ngram.kenlm_tool import load_model  # here: only this command needs kenlm

    if not Path(path).is_file():
        raise InputError("no such file: expected a KenLM model (ARPA or binary)", path=path)
    try:
        return load_model(path)
    except (OSError, RuntimeError, ValueError) as err:
        detail = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise InputError(f"not a KenLM model ({detail}); expected an ARPA or KenLM binary file",
                         path=path) from None


def _char_ngram(args) -> int:
    from ..ngram.char import score_unit

    units = read_units(args.text)
    english = read_units(args.english) if args.english else None
    if english is not None and len(english) != len(units):
        raise InputError(f"{len(english)} units, {args.text} has {len(units)}; expected aligned "
                         f"files (the same units, line by line)", path=args.english)
    model = _load_model(args.model)
    check_char_model(model, args.model, units)
    from tqdm import tqdm

    scores = []
    for lineno, unit in enumerate(tqdm(units, desc="scoring units", unit="unit",
                                       disable=args.quiet), start=1):
        try:
            scores.append(score_unit(model, unit))
        except (InputError, ValueError) as err:
            raise InputError(str(err), path=args.text, line=lineno) from None
    n_chars = sum(s.n_chars for s in scores)
    n_unseen = sum(s.n_unseen for s in scores)
    if n_unseen == n_chars:
        raise InputError(f"none of the {n_chars} characters of {args.text} is in the model's "
                         f"vocabulary: expected a character model trained on this language",
                         path=args.model)
    bits = sum(s.bits for s in scores)
    print(f"units\t{len(units)}")
    print(f"bits_total\t{bits:.4f}")
    print(f"bits_per_utterance\t{bits / len(units):.4f}")
    print(f"bits_per_char\t{bits / n_chars:.4f}")
    print(f"bits_per_byte\t{bits / sum(s.n_bytes for s in scores):.4f}")
    print(f"unseen_chars\t{n_unseen}")
    if english is not None:
        print(f"bpec\t{bits / sum(len(u) for u in english):.4f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fairppl", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("char-ngram", help="score a text file with a KenLM character n-gram")
    p.add_argument("--model", required=True, help="KenLM model (ARPA or binary) over characters")
    p.add_argument("--text", required=True, help="UTF-8 file, one unit per line")
    p.add_argument("--english", help="aligned English file (for BPEC)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_char_ngram)
    from .marginal import add_parser  # the marginal command lives in its own module

    add_parser(sub)
    from .campaign import add_parser as add_campaign  # the Shannon game's campaign files

    add_campaign(sub)
    from .profile import add_parser as add_profile  # a site profile checked before a run

    add_profile(sub)
    from .config_check import add_parser as add_config  # config files checked before a run

    add_config(sub)
    from ..tokenizers.parity import add_parser as add_parity  # FLORES-200 tokenizer parity

    add_parity(sub)
    from ..lm.goldfish import add_parser as add_goldfish  # FLORES second halves vs Goldfish

    add_goldfish(sub)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except InputError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
