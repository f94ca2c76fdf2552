"""A pretrained LM's second-half bits on FLORES-200 beside Goldfish's, compared by rank.

Per FLORES code, :func:`second_half_by_code` scores an evenly spaced sample of N sentences
(:func:`fairppl.corpus.readers.evenly_spaced`, the same sentences in every code) with
:func:`fairppl.lm.second_half.score_second_halves` (Goldfish's definition: the summed bits of
the second half of each sentence given its first half) and takes the mean over the sample.
:func:`rank_comparison` puts that mean beside the published per-code means of
``goldfish_flores_chang2024.tsv`` (Chang et al. 2024, from tylerachang/goldfish) and gives
Spearman's rho per reference column over the codes where both exist, with a percentile
bootstrap interval over codes (the study's draws: :func:`fairppl.stats.bootstrap.resample_counts`).

Only ranks are compared. FLORES may be in the pretrained models' training data (contamination),
the Goldfish are monolingual models trained on other text (domain), the models' sizes and
tokenizers differ, and our mean rests on N sentences where theirs rests on every sentence of
their FLORES file: the absolute bits are not comparable, the order of the languages is the
check.

Reference columns (:data:`REFERENCES`): ``goldfish`` is the largest Goldfish of the language
(``goldfish_1000mb`` where the language has 1 GB of training text, else ``goldfish_full``, the
model on all its text), ``goldfish_5mb`` the model every language has (5 MB, byte-premium
scaled); both only where the Goldfish is the code's own language (``goldfish_used`` equal to the
code: for e.g. ``ace_arab`` they used the Urdu model). ``xglm4b5``, ``xglm7b5``, ``bloom7b1`` and
``mala500`` are the multilingual models they scored the same way, on every code they list.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Sequence

import numpy as np
import polars as pl

from ..core.errors import InputError
from ..stats.bootstrap import BootstrapSettings, percentile_interval, resample_counts
from ..tokenizers.parity import path_argument

#: The file name of Goldfish's per-code table.
ANCHORS_FILE = "goldfish_flores_chang2024.tsv"
#: Reference columns of :func:`rank_comparison` and what each is.
REFERENCES = {
    "goldfish": "largest Goldfish of the code's own language (1000mb, else full)",
    "goldfish_5mb": "Goldfish on 5 MB (byte-premium scaled) of the code's own language",
    "xglm4b5": "XGLM 4.5B", "xglm7b5": "XGLM 7.5B", "bloom7b1": "BLOOM 7.1B",
    "mala500": "MaLA-500 10B",
}
#: Goldfish's cut: tokens of a line counted (:data:`fairppl.lm.second_half.GOLDFISH_MAX_TOKENS`,
#: repeated here so that registering the command does not import torch).
MAX_TOKENS = 511
#: FLORES splits a sample can be drawn from (``both``: dev lines, then devtest lines).
SPLITS = ("dev", "devtest", "both")
CAVEAT = ("ranks only: FLORES may be in the pretrained LMs' training data (contamination); the "
          "Goldfish are monolingual models trained on other text (domain), of other sizes and "
          "tokenizers; our mean rests on a sample of sentences")


def read_goldfish(path: str | Path) -> pl.DataFrame:
    """The anchors table as ``code`` (lower case, e.g. ``ace_latn``), ``goldfish_used`` and the
    reference columns of :data:`REFERENCES` (mean bits per sentence's second half; null where
    absent or, for the Goldfish columns, where the model is another language's). InputError
    naming the file and line when it is missing, lacks a column or holds a non-number."""
    path = str(path)
    if not Path(path).is_file():
        raise InputError(f"file not found: expected Goldfish's per-code table {ANCHORS_FILE} "
                         f"(--anchors)", path=path)
    need = ["flores_lang", "goldfish_used", "goldfish_5mb", "goldfish_full", "goldfish_1000mb",
            "xglm4b5", "xglm7b5", "bloom7b1", "mala500"]
    rows = []
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle, delimiter="\t")
        missing = [c for c in need if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(f"column(s) {', '.join(missing)} missing: expected the columns of "
                             f"{ANCHORS_FILE} ({', '.join(need)})", path=path, line=1)
        for line, row in enumerate(reader, start=2):
            values = {}
            for column in need[2:]:
                text = (row[column] or "").strip()
                try:
                    values[column] = float(text) if text else None
                except ValueError:
                    raise InputError(f"column '{column}': {text!r}: expected a number of bits "
                                     f"or nothing", path=path, line=line) from None
            own = row["goldfish_used"].strip().lower() == row["flores_lang"].strip().lower()
            largest = values["goldfish_1000mb"] if values["goldfish_1000mb"] is not None \
                else values["goldfish_full"]
            rows.append({"code": row["flores_lang"].strip().lower(),
                         "goldfish_used": row["goldfish_used"].strip(),
                         "goldfish": largest if own else None,
                         "goldfish_5mb": values["goldfish_5mb"] if own else None,
                         **{c: values[c] for c in ("xglm4b5", "xglm7b5", "bloom7b1", "mala500")}})
    schema = {"code": pl.Utf8, "goldfish_used": pl.Utf8, **{c: pl.Float64 for c in REFERENCES}}
    return pl.DataFrame(rows, schema=schema)


def sample_sentences(flores: dict[str, tuple[str, str]], n: int | None,
                     split: str = "both") -> dict[str, list[str]]:
    """``{code: lines}``: each code's FLORES lines of ``split`` (:data:`SPLITS`), stripped as
    Goldfish strip them, ``n`` of them evenly spaced (None: all); ``flores`` as
    :func:`fairppl.corpus.flores.read_flores` returns it."""
    from ..corpus.readers import evenly_spaced
    from .second_half import goldfish_line

    if split not in SPLITS:
        raise InputError(f"split {split!r}: expected one of {', '.join(SPLITS)}")
    out = {}
    for code, (dev, devtest) in flores.items():
        parts = {"dev": [dev], "devtest": [devtest], "both": [dev, devtest]}[split]
        lines = [goldfish_line(line) for text in parts for line in text.rstrip("\n").split("\n")]
        out[code] = [lines[i] for i in evenly_spaced(len(lines), n)]
    return out


def second_half_by_code(model, tokenizer, sentences: dict[str, Sequence[str]], *,
                        start_token: str | None = None, batch_size: int = 16,
                        max_tokens: int | None = MAX_TOKENS) -> pl.DataFrame:
    """Per code: ``sentences``, the mean second-half bits (``second_half_bits``) and the counts
    behind it (tokens, sentences whose midpoint falls inside a token or whose half tokenizes
    differently alone, sentences cut at Goldfish's 511 tokens, unknown tokens, lines that do not
    round-trip). ``max_tokens``: Goldfish's cut (None: none). One scorer call for all codes
    (batches across codes)."""
    from .second_half import score_second_halves

    codes = list(sentences)
    flat = [line for code in codes for line in sentences[code]]
    halves = score_second_halves(model, tokenizer, flat, start_token=start_token,
                                 batch_size=batch_size, max_tokens=max_tokens)
    rows, i = [], 0
    for code in codes:
        part = halves[i:i + len(sentences[code])]
        i += len(part)
        rows.append({
            "code": code, "sentences": len(part),
            "second_half_bits": (math.fsum(h.bits for h in part) / len(part)) if part else None,
            "tokens_per_sentence": (sum(h.tokens for h in part) / len(part)) if part else None,
            "split_inside_token": sum(not h.aligned for h in part),
            "truncated": sum(h.truncated for h in part),
            "unknown_tokens": sum(h.unknown for h in part),
            "not_lossless": sum(not h.lossless for h in part)})
    return pl.DataFrame(rows, schema={"code": pl.Utf8, "sentences": pl.Int64,
                                      "second_half_bits": pl.Float64,
                                      "tokens_per_sentence": pl.Float64,
                                      "split_inside_token": pl.Int64, "truncated": pl.Int64,
                                      "unknown_tokens": pl.Int64, "not_lossless": pl.Int64})


def spearman_interval(x, y, settings: BootstrapSettings = BootstrapSettings()
                      ) -> tuple[float, float, float]:
    """Spearman's rho of paired ``x`` and ``y`` and its percentile bootstrap interval over the
    pairs (codes), resampled with the study's draws; replicates with a constant column are
    left out. ValueError with fewer than 3 pairs."""
    from scipy.stats import rankdata, spearmanr

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = len(x)
    if n < 3:
        raise ValueError(f"{n} pairs: expected at least 3 for a rank correlation")
    rho = float(spearmanr(x, y).statistic)
    counts = resample_counts(n, settings.replicates, settings.seed).astype(int)
    idx = np.stack([np.repeat(np.arange(n), row) for row in counts])
    rx, ry = rankdata(x[idx], axis=1), rankdata(y[idx], axis=1)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    denom = np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        reps = (rx * ry).sum(axis=1) / denom
    reps = reps[np.isfinite(reps)]
    low, high = percentile_interval(reps, settings.level)
    return rho, float(low), float(high)


def rank_comparison(ours: pl.DataFrame, goldfish: pl.DataFrame,
                    settings: BootstrapSettings = BootstrapSettings()
                    ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``(table, rho)``: ``ours`` (:func:`second_half_by_code`) joined with ``goldfish``
    (:func:`read_goldfish`) on the lower-cased code; ``rho`` one row per reference column of
    :data:`REFERENCES` with the codes where both exist, Spearman's rho and its interval (null
    with fewer than 3 codes)."""
    table = (ours.with_columns(pl.col("code").str.to_lowercase().alias("_key"))
             .join(goldfish.rename({"code": "_key"}), on="_key", how="left").drop("_key"))
    rows = []
    for column, what in REFERENCES.items():
        both = table.filter(pl.col("second_half_bits").is_not_null()
                            & pl.col(column).is_not_null())
        rho = low = high = None
        if both.height >= 3:
            rho, low, high = spearman_interval(both["second_half_bits"], both[column], settings)
        rows.append({"reference": column, "model": what, "codes": both.height, "rho": rho,
                     "rho_low": low, "rho_high": high})
    rho = pl.DataFrame(rows, schema={"reference": pl.Utf8, "model": pl.Utf8, "codes": pl.Int64,
                                     "rho": pl.Float64, "rho_low": pl.Float64,
                                     "rho_high": pl.Float64})
    return table, rho


def sheet_start_token(model_dir: str | Path, sheet: str | Path = "config/models.tsv"
                      ) -> str | None:
    """The start token (``bos`` column) the study's model sheet gives the model stored in
    ``model_dir`` (``resources/models/<id>/hf``: the row of ``<id>``), or None."""
    folder = Path(model_dir)
    if folder.name != "hf" or not Path(sheet).is_file():
        return None
    with open(sheet, encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            if row.get("model") == folder.parent.name:
                return (row.get("bos") or "").strip() or None
    return None


def compare(flores_archive: str, model_dir: str, anchors: str, n: int | None, *,
            split: str = "both", codes: list[str] | None = None, sha256: str | None = None,
            start_token: str | None = None, batch_size: int = 16,
            max_tokens: int | None = MAX_TOKENS,
            settings: BootstrapSettings = BootstrapSettings()):
    """Read, score and compare (the ``fairppl goldfish`` command): ``(table, rho, start)``,
    ``start`` the start token used (the sheet's for a ``resources/models/<id>/hf`` folder
    unless given; else the tokenizer's BOS, as the scorer does)."""
    from ..corpus.flores import FLORES200_SHA256, read_flores
    from .cache import load_lm
    from .pretrained import check_model_folder

    goldfish = read_goldfish(anchors)
    check_model_folder(model_dir, where="--model")
    flores = read_flores(flores_archive, sha256 or FLORES200_SHA256, codes)
    sentences = sample_sentences(flores, n, split)
    model, tokenizer = load_lm(model_dir, device="cpu")
    start = start_token or sheet_start_token(model_dir)
    ours = second_half_by_code(model, tokenizer, sentences, start_token=start,
                               batch_size=batch_size, max_tokens=max_tokens)
    table, rho = rank_comparison(ours, goldfish, settings)
    return table, rho, start or f"{tokenizer.bos_token or tokenizer.eos_token} (tokenizer)"


def add_parser(sub) -> None:
    """Register the ``goldfish`` subcommand on an argparse subparsers object."""
    p = sub.add_parser("goldfish", help="a pretrained LM's second-half bits on FLORES-200 "
                                        "beside Goldfish's, by rank (a CSV)")
    p.add_argument("--flores", required=True, type=path_argument,
                   help="flores200_dataset.tar.gz")
    p.add_argument("--model", required=True,
                   help="a transformers model folder, e.g. resources/models/smollm2-135m/hf")
    p.add_argument("--sentences", type=int, default=2, metavar="N",
                   help="sentences per code, evenly spaced (default: %(default)s; 0: all)")
    p.add_argument("--out", required=True, type=path_argument,
                   help="the per-code CSV to write")
    p.add_argument("--rho", help="the CSV of rank correlations (default: OUT with .rho.csv)")
    p.add_argument("--anchors", required=True, type=path_argument,
                   help=f"Goldfish's per-code table ({ANCHORS_FILE})")
    p.add_argument("--split", choices=SPLITS, default="both",
                   help="FLORES split sampled (default: %(default)s: dev, then devtest)")
    p.add_argument("--codes", nargs="+", metavar="CODE", help="FLORES codes (default: all)")
    p.add_argument("--sha256", help="the archive's SHA-256 (default: that of the snapshot the "
                                    "study was checked on)")
    p.add_argument("--start-token", help="start-of-text token (default: the model sheet's "
                                         "bos for resources/models/<id>/hf, else the BOS)")
    p.add_argument("--max-tokens", type=int, default=MAX_TOKENS,
                   help="tokens of a line counted, as Goldfish's 512-position cut (default: "
                        "%(default)s; 0: every token)")
    p.add_argument("--batch-size", type=int, default=16, help="rows per forward pass")
    p.add_argument("--replicates", type=int, default=1000, help="bootstrap replicates")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap draws")
    p.add_argument("--threads", type=int, help="torch CPU threads (default: torch's)")
    p.set_defaults(func=_run)


def _run(args) -> int:
    import time

    from .second_half import GOLDFISH_SOURCE

    for name in ("sentences", "max_tokens"):
        if getattr(args, name) < 0:
            raise InputError(f"--{name.replace('_', '-')} {getattr(args, name)}: expected 0 "
                             f"(all) or more")
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    start = time.perf_counter()
    table, rho, token = compare(
        args.flores, args.model, args.anchors, args.sentences or None, split=args.split,
        codes=args.codes, sha256=args.sha256, start_token=args.start_token,
        batch_size=args.batch_size, max_tokens=args.max_tokens or None,
        settings=BootstrapSettings(replicates=args.replicates, seed=args.seed))
    rho_path = args.rho or str(Path(args.out).with_suffix("")) + ".rho.csv"
    table.write_csv(args.out)
    rho.write_csv(rho_path)
    print(f"second-half bits as Goldfish define them ({GOLDFISH_SOURCE}); start token {token}")
    print(f"{table.height} codes x {args.sentences or 'all'} sentences ({args.split}) in "
          f"{time.perf_counter() - start:.0f} s; {CAVEAT}")
    for row in rho.iter_rows(named=True):
        interval = ("" if row["rho"] is None else
                    f"{row['rho']:+.3f} [{row['rho_low']:+.3f}, {row['rho_high']:+.3f}]")
        print(f"{row['reference']}\t{row['codes']} codes\trho {interval or 'n/a'}")
    print(f"written: {args.out}, {rho_path}")
    return 0
