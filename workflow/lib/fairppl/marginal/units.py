"""One marginal-likelihood job of the workflow: every configured estimator on the evaluation units
of one (corpus, language, model, tokenizer), resumable, written as one per-unit table.

:func:`run_plan` lists the runs: one per (unit, estimator, tau), where only the estimators whose
proposal depends on the temperature (``TAU_ESTIMATORS``) get one run per tau; the others run
once, at the first tau (their ``entropy`` is the lattice's at that tau). :func:`run_units` runs
them through :func:`fairppl.core.runner.run_documents` (one JSON line per finished run in a
partial file beside the output, so a killed job resumes; the options are written beside it and
a partial file of other options is discarded, with a log line) and writes the table
(:data:`KEY_COLUMNS` + ``unit_id`` + :data:`fairppl.marginal.api.FIELDS`, one row per run; all
log-probabilities in nats). The loaders build the LM, its vocabulary and its default tokenizer
for a subword KenLM (:func:`kenlm_lm`) or a transformers folder (:func:`hf_lm`).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Callable, Sequence

import polars as pl

from ..core.errors import InputError
from ..core.io import write_table, write_text
from ..core.runner import document_rng, read_done, run_documents
from .api import FIELDS, estimate

_log = logging.getLogger(__name__)

#: Estimators whose proposal is the unigram lattice at temperature tau.
TAU_ESTIMATORS = ("wr", "wor", "wor-1best")

#: Columns naming the job of every per-unit row.
KEY_COLUMNS = ("corpus", "language", "model", "tokenizer", "split")

#: Types of the record fields (a field no estimator of a job produces is all null).
FIELD_TYPES = {
    "text": pl.String, "estimator": pl.String, "logp_default": pl.Float64, "logp": pl.Float64,
    "ci_low": pl.Float64, "ci_high": pl.Float64, "lower_bound": pl.Boolean,
    "n_samples": pl.Float64, "seconds": pl.Float64, "start_token": pl.String,
    "end_scored": pl.Boolean, "n_tokenizations": pl.Float64, "enumerated": pl.Boolean,
    "percent_nd": pl.Float64, "t0": pl.Float64, "t1": pl.Float64, "t2": pl.Float64,
    "n_blocks": pl.Int64, "n_distinct": pl.Int64, "ess": pl.Float64, "lm_calls": pl.Int64,
    "positions": pl.Int64, "entropy": pl.Float64, "entropy_per_token": pl.Float64,
    "n_tokens": pl.Int64, "n_chars": pl.Int64, "n_bytes": pl.Int64, "n_words": pl.Int64,
    "K": pl.Int64, "L": pl.Int64, "M": pl.Int64, "tau": pl.Float64, "mode": pl.String,
    "beam": pl.Int64, "slack": pl.Int64,
    "log_weights": pl.List(pl.Float64), "ci_note": pl.String,
}
assert tuple(FIELD_TYPES) == FIELDS


def run_plan(unit_ids: Sequence[str], estimators: Sequence[str],
             taus: Sequence[float]) -> list[tuple[str, str, str, float]]:
    """``(run id, unit id, estimator, tau)`` of every run, unit by unit. The run id
    ``"<unit>|<estimator>|<tau>"`` also seeds the run (:func:`document_rng`)."""
    if not estimators or not taus:
        raise InputError("expected at least one estimator and one tau")
    runs = []
    for uid in unit_ids:
        for est in estimators:
            for tau in (taus if est in TAU_ESTIMATORS else taus[:1]):
                runs.append((f"{uid}|{est}|{float(tau)!r}", str(uid), est, float(tau)))
    return runs


def _fresh_part(part: Path, options: dict) -> None:
    """Discard ``part`` unless it was written with ``options``; record them beside it."""
    side = part.with_name(part.name + ".json")
    options = json.loads(json.dumps(options))  # tuples -> lists, as read back
    if part.exists():
        saved = json.loads(side.read_text(encoding="utf-8")) if side.exists() else None
        if saved != options:
            _log.info("%s: partial output of other options (%s): discarded", part,
                      "none recorded" if saved is None else
                      ", ".join(sorted(k for k in options if saved.get(k) != options[k])))
            part.unlink()
    write_text(side, json.dumps(options, sort_keys=True) + "\n")


def run_units(lm, vocab, encode: Callable[[str], Sequence[int]], units: pl.DataFrame, *,
              keys: dict, estimators: Sequence[str], taus: Sequence[float], K: int,
              L: int | None, M: int, seed: int, part, out, unigram_model=None,
              start_token: str | None = None, options: dict | None = None,
              progress: bool = True, blocks=None,
              pass_tokens: int | None = None, lanes: int = 1) -> pl.DataFrame:
    """Run every estimator on ``units`` (columns ``unit_id``, ``text``) and write the per-unit
    table to ``out`` (Parquet); return it. ``keys``: the values of :data:`KEY_COLUMNS`; ``encode``:
    text -> the tokenizer's default ids; ``part``: the partial JSON lines file (kept between
    attempts, removed at the end); ``options``: what the records depend on besides the texts (a
    partial file written under other options is discarded); ``blocks``: where to write the
    lm-guided runs' per-block Q(default) records (:func:`block_table`, Parquet), if given;
    ``pass_tokens``: None runs one unit at a time; a number runs the units' LM requests together,
    forward passes of at most that many new positions (:func:`~.api.estimate_many`: the same
    records, in the same order, appended as they finish; ``lm_calls``, ``positions`` and
    ``seconds`` are then each run's share of the shared calls); ``lanes``: with ``pass_tokens``,
    lanes of units side by side (:func:`fairppl.tokenlm.batch.run_many`)."""
    missing = [k for k in KEY_COLUMNS if k not in keys]
    if missing:
        raise InputError(f"keys lack {missing}: expected {list(KEY_COLUMNS)}")
    part = Path(part)
    part.parent.mkdir(parents=True, exist_ok=True)
    _fresh_part(part, dict(options or {}) | {"estimators": list(estimators),
                                             "taus": [float(t) for t in taus], "K": K, "L": L,
                                             "M": M, "seed": seed})
    texts = dict(zip(units["unit_id"].cast(pl.String), units["text"]))
    runs = run_plan(list(texts), estimators, taus)
    spec = {run_id: (uid, est, tau) for run_id, uid, est, tau in runs}

    def make_record(text: str, run_id: str) -> dict:
        uid, est, tau = spec[run_id]
        per_block: list[dict] = []
        try:
            rec = estimate(lm, vocab, text, est, rng=document_rng(seed, run_id),
                           default_ids=encode(text), K=K, L=L, M=M, tau=tau,
                           unigram_model=unigram_model, start_token=start_token,
                           blocks_out=per_block)
        except ValueError as err:
            raise InputError(f"{keys['language']} unit {uid}, estimator {est}: {err}") from None
        # kept in the partial file with the record, so a resumed job has them too
        return {"unit_id": uid, **rec, "blocks": per_block}

    def make_records(todo: list[tuple[str, str]]):
        from ..tokenlm.batch import UnitFailed
        from .api import estimate_many

        jobs, per_block = [], []
        for text, run_id in todo:
            uid, est, tau = spec[run_id]
            per_block.append([])
            jobs.append(dict(text=text, estimator=est, rng=document_rng(seed, run_id),
                             default_ids=encode(text), K=K, L=L, M=M, tau=tau,
                             unigram_model=unigram_model, start_token=start_token,
                             blocks_out=per_block[-1]))
        try:
            for k, rec in estimate_many(lm, vocab, jobs, pass_tokens=pass_tokens,
                                        lanes=lanes):
                yield {"unit_id": spec[todo[k][1]][0], **rec, "blocks": per_block[k]}
        except UnitFailed as failed:
            uid, est, _ = spec[todo[failed.index][1]]
            if isinstance(failed.error, ValueError):
                raise InputError(f"{keys['language']} unit {uid}, estimator {est}: "
                                 f"{failed.error}") from None
            raise failed.error from None

    ids = [r[0] for r in runs]
    computed = run_documents([texts[r[1]] for r in runs], ids,
                             make_record if pass_tokens is None else None, part,
                             desc=f"{keys['language']} {keys['model']}", progress=progress,
                             make_records=None if pass_tokens is None else make_records)
    _log.info("%d of %d runs computed in this attempt, %d found in %s", computed, len(ids),
              len(ids) - computed, part)
    done = read_done(part, ids)
    lost = [i for i in ids if i not in done]
    if lost:
        raise InputError(f"{len(lost)} runs have no record (first: {lost[:3]})", path=str(part))
    table = unit_table([done[i] for i in ids], keys)
    write_table(table, parquet=out)
    if blocks is not None:
        write_table(block_table([done[i] for i in ids], keys), parquet=blocks)
    part.unlink()
    part.with_name(part.name + ".json").unlink(missing_ok=True)
    return table


def unit_table(records: Sequence[dict], keys: dict) -> pl.DataFrame:
    """The per-unit table of ``records`` (each with ``unit_id`` and the fields of
    :data:`~fairppl.marginal.api.FIELDS`), typed as :data:`FIELD_TYPES`."""
    schema = {k: pl.String for k in KEY_COLUMNS} | {"unit_id": pl.String} | FIELD_TYPES
    rows = [{k: keys[k] for k in KEY_COLUMNS} | {"unit_id": str(r["unit_id"])}
            | {f: r.get(f) for f in FIELDS} for r in records]
    return pl.DataFrame(rows, schema=schema, orient="row")


#: Types of :func:`block_table`'s columns after the keys.
BLOCK_TYPES = {"unit_id": pl.String, "block_index": pl.Int64, "block": pl.String,
               "kind": pl.String, "n_candidates": pl.Int64, "logq_default_nats": pl.Float64,
               "block_chars": pl.Int64}


def block_table(records: Sequence[dict], keys: dict) -> pl.DataFrame:
    """The per-block Q(default) records of the lm-guided runs among ``records`` (each run's
    ``blocks``, see :func:`fairppl.marginal.lm_guided.lm_guided_marginal`): the
    :data:`KEY_COLUMNS` values, ``unit_id``, the block's index, text, kind (T0/T1/T2), candidate
    count, ``logq_default_nats`` (log of the proposal's probability of the block's default
    tokens given the default prefix) and ``block_chars`` (characters)."""
    rows = [{k: keys[k] for k in KEY_COLUMNS} | {"unit_id": str(r["unit_id"])} | b
            | {"block_chars": len(b["block"])}
            for r in records if r.get("estimator") == "lm-guided" for b in r.get("blocks") or ()]
    schema = {k: pl.String for k in KEY_COLUMNS} | BLOCK_TYPES
    return pl.DataFrame(rows, schema=schema, orient="row")


#: Share of an LM's context a unit's default tokenization may fill to enter the marginal stage:
#: the estimators score other tokenizations too, which run longer (at tau = 1, up to 6% longer
#: on the Bible), and every tokenization must fit in one window.
CONTEXT_FILL = 0.85


def speed_settings(config: dict) -> tuple[int | None, int]:
    """``marginal.lm.pass_tokens`` (None: one unit per LM call) and ``marginal.lm.lanes`` of a
    run's config (read from the config, not a rule parameter: a speed setting that changes no
    record must not rerun the finished jobs), their defaults when absent."""
    from ..tokenlm.batch import PASS_TOKENS

    settings = (config.get("marginal") or {}).get("lm") or {}
    return settings.get("pass_tokens", PASS_TOKENS), int(settings.get("lanes") or 1)


def fitting_units(units: pl.DataFrame, encode: Callable[[str], Sequence[int]],
                  max_length: int | None, fill: float = CONTEXT_FILL
                  ) -> tuple[pl.DataFrame, list[str]]:
    """``units`` whose default tokenization, with the start and end tokens, fills at most
    ``fill`` of ``max_length`` positions (all of them without a limit), and the ids of the
    others."""
    if max_length is None:
        return units, []
    keep = [len(encode(text)) + 2 <= fill * max_length for text in units["text"]]
    mask = pl.Series(keep, dtype=pl.Boolean)
    return units.filter(mask), units.filter(~mask)["unit_id"].cast(pl.String).to_list()


def kenlm_lm(model_path, tokenizer_path):
    """``(lm, vocab, encode, unigram)`` for a KenLM n-gram over the pieces of the SentencePiece
    model ``tokenizer_path`` (the study's subword n-gram and its conventions: ``<s>`` context,
    ``</s>`` charged, an unseen piece costs p(<unk>) plus ln(pieces) nats). ``unigram`` is the
    lattice model, or None for a BPE tokenizer."""
    from ..ngram.subword import load_sentencepiece
    from ..tokenizers.spm_model import parse_spm_model
    from ..tokenlm.lm_kenlm import KenLMTokenLM
    from .unigram import UnigramModel
    from .vocab import vocab_from_sentencepiece

    sp = load_sentencepiece(tokenizer_path)
    words = [None if sp.is_control(i) or sp.is_unknown(i) else sp.id_to_piece(i)
             for i in range(sp.get_piece_size())]
    lm = KenLMTokenLM(str(model_path), words)
    unigram = None
    if parse_spm_model(Path(tokenizer_path).read_bytes())["model_type"] == "unigram":
        unigram = UnigramModel.from_file(str(tokenizer_path))
    return lm, vocab_from_sentencepiece(tokenizer_path), sp.encode, unigram


def file_identity(path) -> list:
    """What a model's records depend on: its files' names, sizes and modification times."""
    from ..lm.score_split import model_identity

    path = Path(path)
    if path.is_file():
        return [path.name, path.stat().st_size, path.stat().st_mtime]
    return model_identity(path)


def hf_lm(load_from, special: dict | None = None, device=None, dtype: str = "float32",
          score_end: bool = True):
    """``(lm, vocab, encode, start_token)`` for a transformers folder (or hub id), framed with
    the model sheet's ``bos``/``eos`` when ``special`` gives them (as the study's scorer), loaded
    in ``dtype`` (:func:`fairppl.lm.cache.load_lm`; config ``pretrained.dtype``);
    ``score_end=False`` scores no end token (as the FLORES scorer, Goldfish's convention)."""
    from ..lm.cache import load_lm

    model, tokenizer = load_lm(load_from, device=device, dtype=dtype)
    return framed_lm(model, tokenizer, special, score_end=score_end)


def framed_lm(model, tokenizer, special: dict | None = None, score_end: bool = True):
    """:func:`hf_lm`'s ``(lm, vocab, encode, start_token)`` for a model and tokenizer already
    loaded (e.g. a benchmark's model built from its config with random weights)."""
    from ..tokenlm.lm_hf import HFTokenLM
    from .vocab import vocab_from_hf

    special = special or {}
    lm = HFTokenLM(model, tokenizer, start_token=special.get("bos"),
                   end_token=special.get("eos"), score_end=score_end)

    def encode(text: str) -> list[int]:
        return tokenizer(text, add_special_tokens=False, split_special_tokens=True)["input_ids"]

    start = tokenizer.convert_ids_to_tokens(lm.start_id)
    return lm, vocab_from_hf(tokenizer), encode, start
