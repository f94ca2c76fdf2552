"""How the study's cost grows: Snakemake's per-job benchmark files joined with the size of what
each job did, and a least-squares line ``cost = a + b * size`` per rule family (the cost model
behind ``bench/bench_scale.py`` and docs/scale.md).

Every path comes from the workflow itself: :func:`workflow_rules` loads the Snakefile in the
run's folder and keeps each rule's ``benchmark:`` and ``output:`` patterns. The reader
(:func:`read_benchmarks`) walks a ``benchmarks/`` folder as the workflow writes it (one file per
job, matched to its rule by the rule's benchmark pattern: a header ``s h:m:s max_rss max_vms
...`` and one row per run of the job) and returns one row per job with its rule, wildcards, wall
seconds ``s`` and peak resident memory ``max_rss_mb`` (MB, as Snakemake writes it).
:func:`job_sizes` adds, from the job's own outputs under ``results/`` (and the pretrained
models' weights under ``resources/``), each found by filling the rule's output pattern with the
job's wildcards, the sizes the cost can grow with: units, characters and tokens scored, training
tokens, model parameters, LM positions evaluated and K. :func:`fit_families` fits one line per
family (:data:`FAMILIES`: which rules, which size) and returns intercept, slope and R^2 with the
range of the data; :func:`jobs_per_language` counts the jobs each rule runs per language.

What stays written here: which output of which rule holds each size, the token streams' names
of the n-gram models (``char``, ``word-v<V>``, the tokenizer's name) and the tokenizer name
``native`` of a pretrained LM.

The fitted cost is wall seconds, not ``cpu_time``: Snakemake's ``cpu_time`` under-reports a job
that runs several threads (a 2-thread training job showed ``cpu_time`` below its wall time).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from fairppl.config.design import train_corpus
from fairppl.core.errors import InputError
from fairppl.core.io import read_csv, read_parquet

#: The columns Snakemake writes in a benchmark file, in order.
BENCHMARK_COLUMNS = ("s", "h:m:s", "max_rss", "max_vms", "max_uss", "max_pss", "io_in", "io_out",
                     "mean_load", "cpu_time")

#: The wildcards kept as columns of a job's row (a rule's other wildcards are left out).
WILDCARDS = ("corpus", "language", "model", "tokenizer", "stream", "order", "vocab", "type",
             "size", "version", "max_order")
#: The workflow's Snakefile (this file sits in bench/ of the repository).
SNAKEFILE = Path(__file__).resolve().parents[1] / "Snakefile"


@dataclass(frozen=True)
class RulePaths:
    """One rule's file patterns as the workflow declares them, wildcard constraints left out
    (``benchmarks/train_ngram/{corpus}/{language}/{stream}.o{order}.tsv``): ``benchmark``
    (None for a rule without one) and ``output``, each output by its position and, where it has
    one, by its name."""

    benchmark: str | None
    output: dict


def workflow_rules(run: str | Path, snakefile: str | Path = SNAKEFILE) -> dict[str, RulePaths]:
    """Each rule of the workflow (name -> :class:`RulePaths`) as Snakemake loads ``snakefile``
    in the run's folder ``run`` (its ``config/config.yaml``). Loaded as a job's own Snakemake
    loads it (no start-up checks, nothing in the folder repaired or written)."""
    from snakemake.api import SnakemakeApi
    from snakemake.io import strip_wildcard_constraints
    from snakemake.settings.types import (ExecMode, OutputSettings, ResourceSettings,
                                          WorkflowSettings)

    rules = {}
    with SnakemakeApi(OutputSettings(quiet={"all"})) as api:
        workflow = api.workflow(resource_settings=ResourceSettings(cores=1),
                                workflow_settings=WorkflowSettings(exec_mode=ExecMode.SUBPROCESS),
                                snakefile=Path(snakefile).resolve(),
                                workdir=Path(run).resolve())._workflow
        for rule in workflow.rules:
            benchmark = rule.benchmark
            if benchmark is not None and not callable(benchmark):
                benchmark = strip_wildcard_constraints(str(benchmark))
            else:
                benchmark = None
            output: dict = {i: strip_wildcard_constraints(str(f))
                            for i, f in enumerate(rule.output)}
            for name, (start, end) in rule.output._get_names():
                if end is None or end == start + 1:
                    output[name] = output[start]
            rules[rule.name] = RulePaths(benchmark, output)
    return rules


_WILDCARD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def pattern_regex(pattern: str) -> str:
    """A regular expression matching the paths of a file pattern without constraints: each
    wildcard's first occurrence a named group of the shortest value without a slash (so that
    ``{language}.{model}.{tokenizer}`` splits at the first dots), a repeat the same value."""
    parts, seen, last = [], set(), 0
    for match in _WILDCARD.finditer(pattern):
        parts.append(re.escape(pattern[last:match.start()]))
        name = match.group(1)
        parts.append(f"(?P={name})" if name in seen else f"(?P<{name}>[^/]+?)")
        seen.add(name)
        last = match.end()
    parts.append(re.escape(pattern[last:]))
    return "".join(parts)


def fill(pattern: str, wildcards: dict) -> str:
    """``pattern`` with each ``{name}`` replaced by ``wildcards[name]``; a wildcard without a
    value raises ValueError naming it and the pattern."""
    def value(match):
        name = match.group(1)
        if wildcards.get(name) is None:
            raise ValueError(f"no value for wildcard {name!r} of {pattern}")
        return str(wildcards[name])

    return _WILDCARD.sub(value, pattern)


SIZES = ("units", "chars", "tokens", "train_chars", "train_tokens", "params", "positions", "K",
         "forms", "model_bytes", "param_tokens", "param_positions")


@dataclass(frozen=True)
class Family:
    """A rule family: its rules, the size its cost is fitted against and that size in words."""

    name: str
    rules: tuple[str, ...]
    size: str
    size_words: str
    kind: str | None = None  # "token-lm" or "word": only the shannon_bets jobs of that bettor kind


#: The families fitted, in the order the table prints them.
FAMILIES = (
    Family("n-gram training", ("train_ngram",), "model_bytes", "KenLM binary bytes"),
    Family("n-gram scoring", ("score_char_ngram", "score_word_ngram", "score_subword_ngram"),
           "tokens", "tokens scored"),
    Family("tokenizer training", ("train_tokenizer",), "train_chars", "training characters"),
    Family("Transformer training", ("train_neural",), "param_tokens",
           "parameters x training tokens seen"),
    Family("Transformer scoring", ("score_neural",), "tokens", "tokens scored"),
    Family("pretrained scoring", ("score_pretrained",), "param_tokens",
           "parameters x tokens scored"),
    Family("LM-guided marginal", ("marginal_lm",), "param_positions",
           "parameters x LM positions"),
    Family("n-gram marginal, estimators", ("marginal_ngram",), "chars", "characters of the units"),
    Family("n-gram marginal, samples needed", ("marginal_samples_needed",), "chars",
           "characters of the units"),
    Family("n-gram marginal, lengths", ("marginal_lengths",), "positions", "LM positions"),
    Family("Shannon bets, token LMs", ("shannon_bets",), "param_positions",
           "parameters x LM positions", kind="token-lm"),
    Family("Shannon bets, word bettors", ("shannon_bets",), "units", "truncations bet on",
           kind="word"),
    Family("morphology (MCC)", ("mcc_apertium",), "forms", "word forms listed"),
)


def _number(text: str, column: str, path: Path, line: int) -> float | None:
    """One numeric field of a benchmark row; ``NA`` and ``-`` (Snakemake's missing value) are
    None except in the wall-time column ``s``, which must be a number."""
    if text in ("NA", "-", "") and column != "s":
        return None
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"column {column!r} is {text!r}: expected a number", path=str(path),
                         line=line) from None
    if not math.isfinite(value) or value < 0:
        raise InputError(f"column {column!r} is {text!r}: expected a finite number >= 0",
                         path=str(path), line=line)
    return value


def read_benchmark(path: str | Path) -> list[dict]:
    """The rows of one Snakemake benchmark file: per run of the job, ``s`` (wall seconds),
    ``max_rss_mb`` (peak resident memory, MB) and ``cpu_time`` (seconds; may be None).

    A header other than Snakemake's, a row with the wrong number of fields or a non-numeric
    value raises InputError naming the file and the line."""
    path = Path(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines:
        raise InputError("empty file: expected a Snakemake benchmark header and a row",
                         path=str(path), line=1)
    header = lines[0].split("\t")
    if tuple(header[:len(BENCHMARK_COLUMNS)]) != BENCHMARK_COLUMNS:
        raise InputError(f"header {header!r}: expected Snakemake's benchmark columns "
                         f"{'/'.join(BENCHMARK_COLUMNS)} separated by tabs", path=str(path),
                         line=1)
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != len(header):
            raise InputError(f"{len(fields)} tab-separated fields, expected {len(header)} "
                             f"({'/'.join(header)})", path=str(path), line=number)
        record = dict(zip(header, fields))
        rows.append({"s": _number(record["s"], "s", path, number),
                     "max_rss_mb": _number(record["max_rss"], "max_rss", path, number),
                     "cpu_time": _number(record["cpu_time"], "cpu_time", path, number)})
    if not rows:
        raise InputError("no benchmark row after the header: expected one per run of the job",
                         path=str(path), line=2)
    return rows


def parse_benchmark_path(relative: str | Path, rules: dict[str, RulePaths]) -> dict:
    """Rule and wildcards of a benchmark file from its path relative to ``benchmarks/``, read
    with the rules' own benchmark patterns (``rules``: :func:`workflow_rules`):
    ``train_ngram/bible/eng/char.o5.tsv`` -> rule ``train_ngram``, corpus ``bible``, language
    ``eng``, stream ``char``, order ``5``. A path no rule's pattern matches keeps its folder name
    as rule and no wildcards (a rule the workflow no longer has), unless that folder is a rule's
    own: then InputError names the path and the rule's pattern."""
    relative = Path(relative)
    if relative.suffix != ".tsv":
        raise InputError("expected a benchmark file ending in .tsv", path=str(relative))
    out = {"rule": relative.parts[0] if len(relative.parts) > 1
           else relative.with_suffix("").name,
           "job": relative.with_suffix("").as_posix()}
    out.update({name: None for name in WILDCARDS})
    path = "benchmarks/" + relative.as_posix()
    for name, paths in rules.items():
        if paths.benchmark is None:
            continue
        match = re.fullmatch(pattern_regex(paths.benchmark), path)
        if match is not None:
            out["rule"] = name
            out.update({k: v for k, v in match.groupdict().items() if k in out})
            return out
    own = rules.get(out["rule"])
    if own is not None and own.benchmark is not None:
        raise InputError(f"benchmark path of rule {out['rule']} does not match "
                         f"{own.benchmark}", path=str(relative))
    return out


_SCHEMA = {"rule": pl.String, "job": pl.String, **{w: pl.String for w in WILDCARDS},
           "s": pl.Float64, "max_rss_mb": pl.Float64, "cpu_time": pl.Float64}


def read_benchmarks(root: str | Path, rules: dict[str, RulePaths]) -> pl.DataFrame:
    """One row per job of every ``*.tsv`` under ``root`` (a ``benchmarks/`` folder), its rule
    and wildcards read with ``rules`` (:func:`parse_benchmark_path`): rule, job
    (its path without ``.tsv``), the wildcards of :data:`WILDCARDS` (None where the rule has
    none), ``s`` and ``max_rss_mb`` (the mean over the file's rows when the job was repeated,
    ``max_rss_mb`` its maximum) and ``cpu_time``. Sorted by rule and job."""
    root = Path(root)
    if not root.is_dir():
        raise InputError("no such folder: expected Snakemake's benchmarks/ folder", path=str(root))
    records = []
    for path in sorted(root.rglob("*.tsv")):
        fields = parse_benchmark_path(path.relative_to(root), rules)
        rows = read_benchmark(path)
        rss = [r["max_rss_mb"] for r in rows if r["max_rss_mb"] is not None]
        cpu = [r["cpu_time"] for r in rows if r["cpu_time"] is not None]
        fields.update(s=float(np.mean([r["s"] for r in rows])),
                      max_rss_mb=max(rss) if rss else None,
                      cpu_time=float(np.mean(cpu)) if cpu else None)
        records.append(fields)
    if not records:
        raise InputError("no benchmark file (*.tsv) under this folder: expected a run's "
                         "benchmarks/", path=str(root))
    return pl.DataFrame(records, schema=_SCHEMA).sort("rule", "job")


def safetensors_parameters(path: str | Path) -> int:
    """Number of parameters stored in a ``.safetensors`` file (the product of each tensor's shape,
    summed), read from its JSON header alone."""
    path = Path(path)
    with open(path, "rb") as handle:
        head = handle.read(8)
        if len(head) != 8:
            raise InputError("shorter than a safetensors header", path=str(path))
        size = int.from_bytes(head, "little")
        try:
            header = json.loads(handle.read(size))
        except ValueError:
            raise InputError("unreadable safetensors header: expected JSON", path=str(path)) \
                from None
    return sum(math.prod(t["shape"]) for k, t in header.items() if k != "__metadata__")


def _json(path: Path) -> dict:
    if not path.exists():
        raise InputError("no such file: expected the job's metadata (JSON)", path=str(path))
    return json.loads(path.read_text(encoding="utf-8"))


class _Outputs:
    """The outputs of a run's jobs: ``run`` / a rule's output pattern filled with wildcards."""

    def __init__(self, run: Path, rules: dict[str, RulePaths]):
        self.run, self.rules = run, rules

    def __call__(self, rule: str, which: str | int, **wildcards) -> Path:
        paths = self.rules.get(rule)
        if paths is None or which not in paths.output:
            raise InputError(f"the workflow has no output {which!r} of rule {rule}: expected the "
                             f"rules this cost model reads (bench/scale_model.py)")
        return self.run / fill(paths.output[which], wildcards)


def _token_lm_parameters(output: _Outputs, corpus: str, language: str, model: str,
                         tokenizer: str) -> int | None:
    """Parameters of a token LM: the study's Transformer (the training metadata of the model
    trained for ``corpus``, already mapped to its training corpus) or a pretrained model (its
    weights); None for a word bettor (KenLM n-gram, eq. 7 bigram)."""
    if model == "transformer":
        stats = output("train_neural", "stats", corpus=corpus, language=language,
                       tokenizer=tokenizer)
        return int(_json(stats)["n_params"])
    if tokenizer == "native":
        folder = output("cache_pretrained", "hf", model=model)
        files = sorted(folder.glob("*.safetensors"))
        if not files:
            raise InputError("no .safetensors weights: expected the converted pretrained model",
                             path=str(folder))
        return sum(safetensors_parameters(f) for f in files)
    return None


def _sizes(row: dict, output: _Outputs, config: dict, cache: dict) -> dict:
    """The sizes of one job (see :func:`job_sizes`) from its outputs."""
    rule, corpus, language = row["rule"], row["corpus"], row["language"]
    model, tokenizer, order = row["model"], row["tokenizer"], row["order"]
    wildcards = {name: row[name] for name in WILDCARDS if row[name] is not None}
    out: dict = {}

    def own(which: str | int = 0, **changed) -> Path:
        return output(rule, which, **{**wildcards, **changed})

    def params(m: str, t: str) -> int | None:
        trained = train_corpus(config, corpus) if m == "transformer" else None
        key = (trained, language, m, t)
        if key not in cache:
            cache[key] = _token_lm_parameters(output, trained, language, m, t)
        return cache[key]

    def scored(table: Path) -> None:
        frame = read_parquet(table, ["n_chars", "n_tokens"])
        out.update(units=frame.height, chars=int(frame["n_chars"].sum()),
                   tokens=int(frame["n_tokens"].sum()))

    def kenlm_bytes(stream: str) -> int:
        binary = output("train_ngram", "model", corpus=train_corpus(config, corpus),
                        language=language, stream=stream, order=order)
        if not binary.exists():
            raise InputError("no such file: expected the job's KenLM binary", path=str(binary))
        return binary.stat().st_size

    if rule == "train_ngram":
        meta = _json(own("record"))
        out.update(units=meta["n_train_units"], train_tokens=meta["n_tokens"],
                   model_bytes=kenlm_bytes(row["stream"]))
    elif rule == "score_char_ngram":
        scored(own("scores"))
        out["model_bytes"] = kenlm_bytes("char")
    elif rule == "score_word_ngram":
        scored(own("scores"))
        out["model_bytes"] = kenlm_bytes(f"word-v{row['vocab']}")
    elif rule == "score_subword_ngram":
        scored(own("scores"))
        out["model_bytes"] = kenlm_bytes(tokenizer)
    elif rule == "train_tokenizer":
        meta = _json(own("record"))
        out.update(units=meta["n_train_units"], train_chars=meta["n_train_chars"])
    elif rule == "train_neural":
        stats = _json(own("stats"))
        out.update(params=stats["n_params"], train_tokens=stats["tokens_seen"])
    elif rule == "score_neural":
        scored(own("scores"))
        out["params"] = params("transformer", tokenizer)
    elif rule == "score_pretrained":
        scored(own("scores"))
        out["params"] = params(model, "native")
    elif rule == "marginal_lm":
        frame = read_parquet(own("table"), ["unit_id", "estimator", "n_chars", "n_tokens",
                                            "positions", "K"])
        units = frame.unique("unit_id")
        guided = frame.filter(pl.col("estimator") == "lm-guided")
        out.update(units=units.height, chars=int(units["n_chars"].sum()),
                   tokens=int(units["n_tokens"].sum()), positions=int(frame["positions"].sum()),
                   K=int(guided["K"].max()) if guided.height else None,
                   params=params(model, tokenizer))
    elif rule in ("marginal_ngram", "marginal_lengths"):
        frame = read_parquet(own("table"))
        units = frame.unique("unit_id")
        out.update(units=units.height, chars=int(units["n_chars"].sum()),
                   positions=int(frame["positions"].sum()))
        if "K" in frame.columns and frame["K"].drop_nulls().len():
            out["K"] = int(frame["K"].max())
    elif rule == "marginal_samples_needed":
        table = own("curves")
        if not table.exists():
            raise InputError("no such file: expected the job's curves", path=str(table))
        units = read_csv(table).unique("unit_id")
        out.update(units=units.height, chars=int(units["n_chars"].sum()), K=int(units["K"].max()))
    elif rule == "marginal_caching":  # its units: those of the Transformer's LM-guided marginal
        table = output("marginal_lm", "table", **{**wildcards, "model": "transformer"})
        frame = read_parquet(table, ["unit_id", "n_chars", "n_tokens"])
        units = frame.unique("unit_id")
        out.update(units=units.height, chars=int(units["n_chars"].sum()),
                   tokens=int(units["n_tokens"].sum()), params=params("transformer", tokenizer))
    elif rule == "shannon_bets":
        frame = read_parquet(own("table"), ["unit_id", "cost_positions"])
        out.update(units=frame.height, positions=int(frame["cost_positions"].sum()),
                   params=params(model, tokenizer))
    elif rule == "mcc_apertium":
        meta = _json(own(0))
        out["forms"] = meta["counts"]["total"]["n_forms"]
    if out.get("params") is not None:
        if out.get("tokens") is not None and rule != "marginal_lm":
            out["param_tokens"] = float(out["params"]) * out["tokens"]
        if out.get("train_tokens") is not None:
            out["param_tokens"] = float(out["params"]) * out["train_tokens"]
        if out.get("positions") is not None:
            out["param_positions"] = float(out["params"]) * out["positions"]
    return out


def job_sizes(frame: pl.DataFrame, run: str | Path, config: dict,
              rules: dict[str, RulePaths]) -> pl.DataFrame:
    """``frame`` (from :func:`read_benchmarks`) with, first, ``family`` (:func:`family_of`) and
    the size columns of :data:`SIZES`, read from each job's outputs under the run's folder
    ``run`` (where ``rules``' output patterns put them): ``units`` (units scored,
    trained on, bet on: truncations for the Shannon game), ``chars`` and ``tokens`` (of the
    units scored), ``train_chars`` and ``train_tokens`` (training text; for a Transformer the
    tokens seen in training), ``params`` (token LM parameters), ``positions`` (LM positions
    evaluated), ``K`` (samples per unit of the marginal estimators), ``forms`` (word forms the
    analyser listed), ``model_bytes`` (the KenLM binary an n-gram job writes or reads, bytes),
    ``param_tokens`` and ``param_positions`` (their products with ``params``), and ``bettor``
    (``token-lm`` or ``word`` for a Shannon job). ``config`` is the run's config (``corpora``,
    ``lemmas``): it says which corpus trained the models an evaluation-only corpus is scored
    with. A size a rule does not have is None; a job whose output is missing raises InputError
    naming the file."""
    output = _Outputs(Path(run), rules)
    cache: dict = {}
    rows = []
    for row in frame.iter_rows(named=True):
        sizes = _sizes(row, output, config, cache)
        row.update({name: sizes.get(name) for name in SIZES})
        row["bettor"] = None
        if row["rule"] == "shannon_bets":
            row["bettor"] = "token-lm" if sizes.get("params") is not None else "word"
        row["family"] = family_of(row["rule"], row["bettor"])
        rows.append(row)
    schema = {"family": pl.String, **dict(frame.schema)}
    schema.update({name: pl.Float64 for name in SIZES})
    schema["bettor"] = pl.String
    return pl.DataFrame(rows, schema=schema)


def family_of(rule: str, bettor: str | None = None, families=FAMILIES) -> str | None:
    """The name of the family a job of ``rule`` (a Shannon job: of that ``bettor`` kind) belongs
    to; None for a rule no family fits (one-off jobs: corpus preparation, installs, builds)."""
    for family in families:
        if rule in family.rules and (family.kind is None or family.kind == bettor):
            return family.name
    return None


def fit_line(x, y) -> tuple[float, float, float]:
    """Least-squares ``y = a + b x``: ``(a, b, r2)``. At least two points with distinct ``x``;
    ``r2`` is 1 - SS_res / SS_tot (1.0 when all ``y`` are equal: the line is flat through
    them)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x and y must be 1-D of one length, got {x.shape} and {y.shape}")
    if x.size < 2 or np.unique(x).size < 2:
        raise ValueError(f"a line needs two distinct x values, got {np.unique(x).size}")
    design = np.column_stack([np.ones_like(x), x])
    (a, b), *_ = np.linalg.lstsq(design, y, rcond=None)
    residual = float(np.sum((y - (a + b * x)) ** 2))
    total = float(np.sum((y - y.mean()) ** 2))
    scale_y = max(float(np.sum(y ** 2)), 1e-300)
    r2 = 1.0 - residual / total if total > 1e-24 * scale_y else 1.0  # y constant: fitted exactly
    return float(a), float(b), r2


def family_points(frame: pl.DataFrame, family: Family) -> pl.DataFrame:
    """The jobs of ``frame`` (with :func:`job_sizes`' columns) that a family's line is fitted
    on: its rules (and bettor kind) with a size; columns rule, job, language, x (the size), s and
    max_rss_mb."""
    jobs = frame.filter(pl.col("rule").is_in(list(family.rules)))
    if family.kind is not None:
        jobs = jobs.filter(pl.col("bettor") == family.kind)
    return jobs.filter(pl.col(family.size).is_not_null()).select(
        "rule", "job", "language", pl.col(family.size).alias("x"), "s", "max_rss_mb")


def fit_families(frame: pl.DataFrame, families=FAMILIES, y: str = "s") -> pl.DataFrame:
    """One least-squares line ``y = a + b * size`` per family with at least three jobs:
    family, size (the column), size_words, n, a (the unit of ``y``), b (``y`` per size unit),
    r2, x_min, x_max, y_min, y_max, y_total. ``y`` is ``s`` (wall seconds) or ``max_rss_mb``.
    A family whose jobs all have one size gets ``a`` = the mean of ``y`` and no ``b`` or ``r2``."""
    rows = []
    for family in families:
        points = family_points(frame, family).filter(pl.col(y).is_not_null())
        if points.height < 3:
            continue
        if points["x"].n_unique() < 2:  # every job the same size: a constant, no slope
            a, b, r2 = float(points[y].mean()), None, None
        else:
            a, b, r2 = fit_line(points["x"].to_numpy(), points[y].to_numpy())
        rows.append({"family": family.name, "size": family.size, "size_words": family.size_words,
                     "n": points.height, "a": a, "b": b, "r2": r2,
                     "x_min": points["x"].min(), "x_max": points["x"].max(),
                     "y_min": points[y].min(), "y_max": points[y].max(),
                     "y_total": points[y].sum()})
    return pl.DataFrame(rows, schema={"family": pl.String, "size": pl.String,
                                      "size_words": pl.String, "n": pl.Int64, "a": pl.Float64,
                                      "b": pl.Float64, "r2": pl.Float64, "x_min": pl.Float64,
                                      "x_max": pl.Float64, "y_min": pl.Float64,
                                      "y_max": pl.Float64, "y_total": pl.Float64})


def jobs_per_language(frame: pl.DataFrame) -> pl.DataFrame:
    """Per rule with a language wildcard: jobs, languages, jobs per language, wall seconds in all
    and per language, and the largest peak memory (MB)."""
    return (frame.filter(pl.col("language").is_not_null())
            .group_by("rule")
            .agg(pl.len().alias("jobs"), pl.col("language").n_unique().alias("languages"),
                 pl.col("s").sum().alias("s_total"), pl.col("max_rss_mb").max().alias("rss_max_mb"))
            .with_columns((pl.col("jobs") / pl.col("languages")).alias("jobs_per_language"),
                          (pl.col("s_total") / pl.col("languages")).alias("s_per_language"))
            .sort("rule"))


def per_unit(frame: pl.DataFrame, rule: str, column: str) -> pl.DataFrame:
    """Per language and model of ``rule``'s jobs in the run's main corpus rows: ``column``
    (``tokens`` or ``positions``) per unit, summed over the jobs of that language and model."""
    jobs = frame.filter((pl.col("rule") == rule) & pl.col(column).is_not_null())
    return (jobs.group_by("corpus", "language", "model", "tokenizer")
            .agg((pl.col(column).sum() / pl.col("units").sum()).alias(f"{column}_per_unit"),
                 pl.col("units").sum().alias("units"))
            .sort("corpus", "model", "tokenizer", "language"))


def gpu_hours(flops: float, peak_flops: float, utilisation: float) -> float:
    """Hours of one accelerator to run ``flops`` floating-point operations at ``utilisation``
    (0-1] of its ``peak_flops`` (operations per second)."""
    if not 0 < utilisation <= 1:
        raise ValueError(f"utilisation must be in (0, 1], got {utilisation}")
    return flops / (peak_flops * utilisation) / 3600.0


def forward_flops(params: float, positions: float) -> float:
    """Forward-pass operations of a decoder LM: 2 per parameter per position (one multiply and
    one add; the attention over contexts of ~100 tokens is left out: for a 7B model with 32
    layers of width 4096 it adds 4 * 32 * 100 * 4096 = 5e7 per position, 0.4% of 2 * 7e9)."""
    return 2.0 * params * positions
