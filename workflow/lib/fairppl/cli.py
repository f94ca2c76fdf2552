"""Command-line entry point: run one estimator on one file without Snakemake.

    fairppl char-ngram --model char.o5.kenlm --text units.txt [--english english.txt]

reads one unit per line (normalised as the pipeline does), scores every character and the end of
each unit, and prints bits per utterance, bits per character and per byte (and BPEC when the
aligned English file is given).
"""

from __future__ import annotations

import argparse
import sys

from .text import decode_utf8, normalize


def _read_units(path: str) -> list[str]:
    with open(path, "rb") as handle:
        text = decode_utf8(handle.read(), path)
    return [normalize(line) for line in text.splitlines()]


def _char_ngram(args) -> int:
    from .charlm import score_units  # imported here: kenlm is only needed for this command

    units = _read_units(args.text)
    scores = score_units(args.model, units, progress=not args.quiet)
    bits = sum(s.bits for s in scores)
    n_chars = sum(s.n_chars for s in scores)
    n_bytes = sum(s.n_bytes for s in scores)
    print(f"units\t{len(units)}")
    print(f"bits_total\t{bits:.4f}")
    print(f"bits_per_utterance\t{bits / max(len(units), 1):.4f}")
    print(f"bits_per_char\t{bits / max(n_chars, 1):.4f}")
    print(f"bits_per_byte\t{bits / max(n_bytes, 1):.4f}")
    print(f"unseen_chars\t{sum(s.n_unseen for s in scores)}")
    if args.english:
        english = _read_units(args.english)
        if len(english) != len(units):
            print(f"error: {args.english} has {len(english)} units, {args.text} has {len(units)}; "
                  f"expected aligned files", file=sys.stderr)
            return 2
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
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
