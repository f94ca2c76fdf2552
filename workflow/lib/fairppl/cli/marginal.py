"""``fairppl marginal``: the marginal likelihood over tokenizations of each line of a file, with
one estimator, without Snakemake.

    fairppl marginal --model DIR --texts FILE --estimator NAME [-K 32] [-L 0] [-M 16]
        [--tau 1.0] [--seed 0] [--bos TOKEN] [--no-eos] [--unigram-model FILE.model]
        [--beam 8] [--mode independent] [--slack 1] --out FILE.jsonl

``--model`` is a transformers folder (a pretrained model, or a trained one under
``results/neural/...``), or a KenLM file over SentencePiece pieces together with
``--unigram-model`` (its ``.model``). One text per line in (normalised as the pipeline does),
one JSON record per line out, in input order (:func:`fairppl.marginal.api.estimate`'s fields; all
log-probabilities in nats of the text given the start token, the end token included unless
``--no-eos``). The run is resumable: records go to ``OUT.part`` as each line finishes (with the
options in ``OUT.part.json``); a rerun with the same options skips the finished lines, and
``OUT`` is written once every line has its record. Each line's randomness comes from
(``--seed``, line number), so a resumed run gives the records of an uninterrupted one.

Errors (missing file, empty line, unknown estimator, K < 1, a start token not in the vocabulary,
a line the estimator cannot handle) print a message naming the file and line and exit with 2.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..core.errors import InputError, ScoringError
from .common import read_units

KENLM_SUFFIXES = (".kenlm", ".arpa", ".bin", ".binary")


def add_parser(sub) -> None:
    """Register the ``marginal`` subcommand on an argparse subparsers object."""
    from ..marginal.api import ESTIMATORS
    from ..marginal.decoding_free import DEFAULT_SLACK
    from ..marginal.defaults import DEFAULT_K, DEFAULT_L, DEFAULT_M

    p = sub.add_parser("marginal", help="marginal likelihood over tokenizations, one JSON line "
                                        "per text")
    p.add_argument("--model", required=True,
                   help="transformers folder, or a KenLM file over pieces (with --unigram-model)")
    p.add_argument("--texts", required=True, help="UTF-8 file, one text per line")
    p.add_argument("--estimator", required=True, help=f"one of {', '.join(ESTIMATORS)}")
    p.add_argument("-K", type=int, default=DEFAULT_K,
                   help=f"samples (paths for nbest) (default {DEFAULT_K}, the study's)")
    p.add_argument("-L", type=int, default=DEFAULT_L or 0,
                   help=f"lm-guided: block length in characters (default {DEFAULT_L or 0}; 0: "
                        f"the longest default token)")
    p.add_argument("-M", type=int, default=DEFAULT_M,
                   help=f"lm-guided: candidates per block (default {DEFAULT_M})")
    p.add_argument("--tau", type=float, default=1.0, help="unigram proposal temperature (1.0)")
    p.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    p.add_argument("--bos", help="start token (default: the model sheet's bos when --model is "
                                 "a sheet model's folder, else the tokenizer's BOS, else its EOS)")
    p.add_argument("--models-sheet", default="config/models.tsv",
                   help="model sheet whose bos/eos apply when --model is the folder of one of "
                        "its models (default config/models.tsv; ignored when absent)")
    p.add_argument("--no-eos", action="store_true", help="do not score the end token")
    p.add_argument("--unigram-model", help="SentencePiece unigram .model of the LM's pieces "
                                           "(wr, wor, wor-1best, nbest; KenLM models)")
    p.add_argument("--beam", type=int, default=8, help="beam: width per byte position (8)")
    p.add_argument("--mode", default="independent", choices=("independent", "consistent"),
                   help="unigram estimators: one tokenization per occurrence or per word type")
    p.add_argument("--slack", type=int, default=DEFAULT_SLACK,
                   help="decoding-free: its uniform draws have at most the canonical token count "
                        f"plus this many tokens (default {DEFAULT_SLACK})")
    p.add_argument("--max-paths", type=int, default=20_000,
                   help="exact under a transformers LM: most tokenizations to enumerate")
    p.add_argument("--out", required=True, help="output JSON lines file")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def _check_args(args) -> None:
    from ..marginal.api import check_estimator

    check_estimator(args.estimator, args.unigram_model or None)
    if args.slack < 0:
        raise InputError(f"--slack={args.slack}: expected a number of tokens >= 0")
    for name in ("K", "M", "beam", "max_paths"):
        if getattr(args, name) < 1:
            raise InputError(f"{'-' if len(name) == 1 else '--'}{name.replace('_', '-')}="
                             f"{getattr(args, name)}: expected at least 1")
    if args.L < 0:
        raise InputError(f"-L={args.L}: expected a block length >= 1 (0: the longest default "
                         f"token)")
    if not args.tau > 0:
        raise InputError(f"--tau={args.tau}: expected a positive temperature")
    for flag, path in (("--model", args.model), ("--texts", args.texts),
                       ("--unigram-model", args.unigram_model)):
        if path is not None and not Path(path).exists():
            raise InputError(f"no such file or folder (given as {flag})", path=path)


def sheet_special_tokens(sheet, model_dir, models_dir="resources/models") -> dict:
    """The model sheet's ``bos``/``eos`` (empty ones left out) of the row whose installed folder
    is ``model_dir``; {} when the sheet is absent or no row's folder is ``model_dir``."""
    from ..lm.pretrained import resolve_model
    from ..config.sheet import read_model_sheet

    if not sheet or not Path(sheet).is_file():
        return {}
    schema = Path(__file__).resolve().parents[3] / "schemas" / "models.schema.yaml"
    target = Path(model_dir).resolve()
    for row in read_model_sheet(str(sheet), str(schema)):
        try:
            resolved = resolve_model(vars(row), models_dir, sheet=str(sheet))
        except InputError:
            continue  # a row that cannot be resolved here (not installed, hub id offline)
        if Path(resolved.load_from).resolve() == target:
            return resolved.special_tokens()
    return {}


def load(args):
    """``(lm, vocab, encode, unigram, start_token, description)`` for the CLI's options."""
    from ..marginal.unigram import UnigramModel
    from ..tokenizers.spm_model import parse_spm_model

    unigram = None
    if args.unigram_model:
        spec = parse_spm_model(Path(args.unigram_model).read_bytes())
        if spec["model_type"] == "unigram":
            unigram = UnigramModel.from_file(args.unigram_model)
        elif args.estimator in ("wr", "wor", "wor-1best", "nbest"):
            raise InputError(f"model type {spec['model_type']!r}: estimator {args.estimator!r} "
                             f"needs a unigram SentencePiece model", path=args.unigram_model)
    if Path(args.model).is_file():
        return _load_kenlm(args, unigram)
    from ..lm.cache import load_lm
    from ..marginal.vocab import vocab_from_hf
    from ..tokenlm.lm_hf import HFTokenLM

    try:
        model, tokenizer = load_lm(args.model)
    except (OSError, ValueError) as err:
        raise InputError(f"cannot load a transformers model and tokenizer here "
                         f"({str(err).splitlines()[0]}): expected a folder with config.json, "
                         f"weights and tokenizer.json", path=args.model) from None
    special = sheet_special_tokens(args.models_sheet, args.model)
    try:
        lm = HFTokenLM(model, tokenizer, start_token=args.bos or special.get("bos"),
                       end_token=special.get("eos"), score_end=not args.no_eos)
    except ScoringError as err:
        raise InputError(f"--bos: {err}", path=args.model) from None

    def encode(text):
        return tokenizer(text, add_special_tokens=False, split_special_tokens=True)["input_ids"]

    start = tokenizer.convert_ids_to_tokens(lm.start_id)
    return lm, vocab_from_hf(tokenizer), encode, unigram, start


def _load_kenlm(args, unigram):
    from ..marginal.vocab import vocab_from_sentencepiece
    from ..ngram.subword import load_sentencepiece
    from ..tokenlm.lm_kenlm import KenLMTokenLM

    if not args.unigram_model:
        raise InputError("a KenLM model needs --unigram-model (the SentencePiece .model whose "
                         "pieces are its words)", path=args.model)
    if args.bos not in (None, "<s>"):
        raise InputError(f"--bos {args.bos!r}: a KenLM model starts from its own <s> context; "
                         f"expected no --bos or '<s>'", path=args.model)
    sp = load_sentencepiece(args.unigram_model)
    words = [None if sp.is_control(i) or sp.is_unknown(i) else sp.id_to_piece(i)
             for i in range(sp.get_piece_size())]
    try:
        lm = KenLMTokenLM(str(args.model), words, end=not args.no_eos)
    except (OSError, RuntimeError) as err:
        raise InputError(f"not a KenLM model ({str(err).splitlines()[0]}); expected an ARPA or "
                         f"KenLM binary file", path=args.model) from None
    return lm, vocab_from_sentencepiece(args.unigram_model), sp.encode, unigram, "<s>"


def options(args) -> dict:
    """What the records depend on besides the texts (written beside the partial output)."""
    keep = ("model", "estimator", "K", "L", "M", "tau", "seed", "bos", "no_eos",
            "unigram_model", "beam", "mode", "slack", "max_paths")
    return {k: getattr(args, k) for k in keep} | {"texts": str(Path(args.texts).resolve())}


def _check_resume(part: Path, opts: dict) -> None:
    side = part.with_name(part.name + ".json")
    if part.exists() and side.exists():
        saved = json.loads(side.read_text(encoding="utf-8"))
        if saved != opts:
            diff = sorted(k for k in opts if saved.get(k) != opts[k])
            raise InputError(f"partial output of a run with other options ({', '.join(diff)}): "
                             f"rerun with those options or delete it", path=str(part))
    from ..core.io import write_text

    write_text(side, json.dumps(opts, sort_keys=True) + "\n")


def run(args) -> int:
    from ..core.runner import document_rng, finish, run_documents
    from ..marginal import api

    _check_args(args)
    texts = read_units(args.texts)
    lm, vocab, encode, unigram, start = load(args)
    part = Path(args.out + ".part")
    opts = options(args)
    _check_resume(part, opts)
    ids = [str(n) for n in range(1, len(texts) + 1)]

    def make_record(text: str, doc: str) -> dict:
        try:
            return api.estimate(lm, vocab, text, args.estimator, rng=document_rng(args.seed, doc),
                                default_ids=encode(text), K=args.K, L=args.L or None, M=args.M,
                                tau=args.tau, unigram_model=unigram, mode=args.mode,
                                beam=args.beam, slack=args.slack,
                                max_paths=args.max_paths, start_token=start)
        except (ValueError, ScoringError) as err:
            raise InputError(str(err), path=args.texts, line=int(doc)) from None

    run_documents(texts, ids, make_record, part, desc=f"marginal {args.estimator}",
                  progress=not args.quiet)
    records = finish(part, args.out, ids)
    part.unlink()
    part.with_name(part.name + ".json").unlink(missing_ok=True)
    cut = sum(1 for r in records if (r.get("t2") or 0) > 0)
    if cut:
        print(f"warning: -L {args.L} is shorter than a default token on {cut} line(s): their "
              f"T2 blocks (field t2) put the default tokenization outside the proposal",
              file=sys.stderr)
    return 0
