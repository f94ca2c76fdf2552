"""bench/scale_model.py (the cost model behind bench/bench_scale.py) with the workflow's own
rules (loaded on the test config, as bench_scale.py loads a run's: these tests run Snakemake,
`e2e`): benchmark files and their paths, sizes read from the jobs' outputs where the rules put
them, least-squares fits recovered exactly from synthetic runs, and a path or a job that does not
fit its rule named. Without the rules (bad benchmark files, the closed-form line, wildcard
patterns): tests/unit/test_scale_model.py."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from conftest import ROOT, make_workdir
from fairppl.core.errors import InputError

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import scale_model as scale  # noqa: E402

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time"
CONFIG = {"corpora": {"bible": {}, "udhr": {"models_from": "bible"}}, "lemmas": {"corpora": []}}


#: Loads the workflow in a working directory and prints each rule's patterns as one JSON line
#: (argv: the bench/ folder, the working directory).
LOAD_RULES = """
import json, sys
sys.path.insert(0, sys.argv[1])
import scale_model
rules = scale_model.workflow_rules(sys.argv[2])
print("RULES " + json.dumps({n: [r.benchmark, list(r.output.items())] for n, r in rules.items()}))
"""


@pytest.fixture(scope="module")
def rules(tmp_path_factory):
    """The workflow's rules (:func:`scale_model.workflow_rules`) on the test config, loaded
    once in a subprocess."""
    wd = make_workdir(tmp_path_factory.mktemp("scale") / "wd", ROOT / "tests" / "config")
    proc = subprocess.run([sys.executable, "-c", LOAD_RULES, str(ROOT / "bench"), str(wd)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RULES "))
    return {name: scale.RulePaths(benchmark, dict(items))
            for name, (benchmark, items) in json.loads(line[len("RULES "):]).items()}


def write_benchmark(path, rows):
    """A benchmark file in Snakemake's format: ``rows`` of (s, max_rss, cpu_time)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [HEADER]
    for s, rss, cpu in rows:
        hms = f"0:00:{int(s):02d}"
        lines.append(f"{s!r}\t{hms}\t{rss}\t2730.59\t1090.06\t1114.28\t6.35\t15.18\t90.87\t{cpu}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_safetensors(path, shapes: dict[str, list[int]]):
    """A float32 .safetensors file with zero tensors of the given shapes."""
    header, offset = {}, 0
    for name, shape in shapes.items():
        size = 4 * math.prod(shape)
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header).encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(len(raw).to_bytes(8, "little") + raw + bytes(offset))


@pytest.mark.e2e
def test_a_real_benchmark_file_and_its_path(tmp_path, rules):
    # The file as the fresh-clone study wrote it for a pretrained model's LM-guided marginal.
    path = "marginal_lm/bible/zho.gemma3-270m.native.tsv"
    (tmp_path / path).parent.mkdir(parents=True)
    (tmp_path / path).write_text(
        HEADER + "\n187.92\t0:03:07\t2584.68\t4166.04\t1309.67\t1938.23\t0.79\t0.30\t82.41"
        "\t155.36\n", encoding="utf-8")
    assert scale.read_benchmark(tmp_path / path) == [
        {"s": 187.92, "max_rss_mb": 2584.68, "cpu_time": 155.36}]
    row = scale.read_benchmarks(tmp_path, rules).row(0, named=True)
    assert (row["rule"], row["model"], row["s"], row["max_rss_mb"]) == \
        ("marginal_lm", "gemma3-270m", 187.92, 2584.68)
    assert scale.parse_benchmark_path(path, rules) == {
        "rule": "marginal_lm", "job": "marginal_lm/bible/zho.gemma3-270m.native",
        "corpus": "bible", "language": "zho", "model": "gemma3-270m", "tokenizer": "native",
        "stream": None, "order": None, "vocab": None, "type": None, "size": None,
        "version": None, "max_order": None}


@pytest.mark.parametrize("path, expected", [
    ("train_ngram/bible/eng/word-v1000.o3.tsv",
     {"rule": "train_ngram", "corpus": "bible", "language": "eng", "stream": "word-v1000",
      "order": "3"}),
    ("train_ngram/bible-lemmas/tur/char.o5.tsv",
     {"rule": "train_ngram", "corpus": "bible-lemmas", "language": "tur", "stream": "char",
      "order": "5"}),
    ("score_word_ngram/bible/pol.v5000.o3.tsv",
     {"rule": "score_word_ngram", "corpus": "bible", "language": "pol", "vocab": "5000",
      "order": "3"}),
    ("score_word_ngram/bible/pol.vall.o3.tsv",
     {"rule": "score_word_ngram", "corpus": "bible", "language": "pol", "vocab": "all",
      "order": "3"}),
    ("score_subword_ngram/udhr/rus.spm-bpe-4000.o5.tsv",
     {"rule": "score_subword_ngram", "corpus": "udhr", "language": "rus",
      "tokenizer": "spm-bpe-4000", "order": "5"}),
    ("train_tokenizer/bible/ukr.unigram-4000.tsv",
     {"rule": "train_tokenizer", "corpus": "bible", "language": "ukr", "type": "unigram",
      "size": "4000"}),
    ("build_kenlm/0.2.0-o8.tsv", {"rule": "build_kenlm", "version": "0.2.0", "max_order": "8"}),
    ("score_pretrained/udhr/hin.smollm2-135m.tsv",
     {"rule": "score_pretrained", "corpus": "udhr", "language": "hin", "model": "smollm2-135m"}),
    ("shannon_bets/bible/eng.kenlm-word-o3.word-v1000.tsv",
     {"rule": "shannon_bets", "corpus": "bible", "language": "eng", "model": "kenlm-word-o3",
      "tokenizer": "word-v1000"}),
    ("marginal_samples_needed/bible/jpn.spm-unigram-4000.o5.tsv",
     {"rule": "marginal_samples_needed", "corpus": "bible", "language": "jpn",
      "tokenizer": "spm-unigram-4000", "order": "5"}),
    ("mcc/apertium/pol.tsv", {"rule": "mcc_apertium", "language": "pol"}),
    ("forms_per_lemma.tsv", {"rule": "forms_per_lemma"}),
    ("some_new_rule/x/y.tsv", {"rule": "some_new_rule"}),
])
@pytest.mark.e2e
def test_paths_of_every_rule(path, expected, rules):
    parsed = scale.parse_benchmark_path(path, rules)
    for name in scale.WILDCARDS:
        assert parsed[name] == expected.get(name), name
    assert parsed["rule"] == expected["rule"]
    assert parsed["job"] == path[:-4]


@pytest.mark.e2e
def test_reader_keeps_the_numbers_and_averages_repeats(tmp_path, rules):
    write_benchmark(tmp_path / "train_neural/bible/eng.char.tsv", [(26.35, 1139.70, 24.49)])
    write_benchmark(tmp_path / "score_neural/udhr/eng.char.tsv",
                    [(5.0, 600.0, 4.0), (7.0, 630.5, "NA")])
    frame = scale.read_benchmarks(tmp_path, rules)
    assert frame["rule"].to_list() == ["score_neural", "train_neural"]
    rows = {r["rule"]: r for r in frame.iter_rows(named=True)}
    assert rows["train_neural"]["s"] == 26.35
    assert rows["train_neural"]["max_rss_mb"] == 1139.70
    assert rows["train_neural"]["cpu_time"] == 24.49
    assert rows["score_neural"]["s"] == 6.0  # mean of the two runs
    assert rows["score_neural"]["max_rss_mb"] == 630.5  # the larger peak
    assert rows["score_neural"]["cpu_time"] == 4.0  # NA is missing, not zero
    assert rows["score_neural"]["corpus"] == "udhr" and rows["score_neural"]["tokenizer"] == "char"


@pytest.mark.e2e
def test_a_path_that_does_not_fit_its_rule_is_named(tmp_path, rules):
    write_benchmark(tmp_path / "score_word_ngram" / "bible" / "pol.o3.tsv", [(1.0, 1.0, 1.0)])
    with pytest.raises(InputError, match=r"score_word_ngram/bible/pol\.o3\.tsv.*does not match "
                                         r"benchmarks/score_word_ngram/\{corpus\}/"
                                         r"\{language\}\.v\{vocab\}\.o\{order\}\.tsv"):
        scale.read_benchmarks(tmp_path, rules)


def synthetic_study(tmp_path):
    """Benchmark files and outputs of two families whose wall seconds are exact lines:
    n-gram training, s = 1.5 + 2.5e-7 * KenLM bytes; pretrained scoring,
    s = 12 + 4e-11 * parameters * tokens scored, for two models and three languages."""
    bench, results = tmp_path / "benchmarks", tmp_path / "results"
    resources = tmp_path / "resources"
    for i, (language, stream, order) in enumerate([("eng", "char", 5), ("eng", "word-v1000", 3),
                                                   ("hin", "char", 5), ("hin", "spm-bpe-4000", 5)]):
        folder = results / "ngram" / "bible" / language
        folder.mkdir(parents=True, exist_ok=True)
        n_bytes = 1_000_000 * (i + 1) + 37 * i
        (folder / f"{stream}.o{order}.kenlm").write_bytes(bytes(n_bytes))
        (folder / f"{stream}.o{order}.json").write_text(json.dumps(
            {"stream": stream, "order": order, "n_train_units": 100, "n_tokens": 5000 * (i + 1)}))
        write_benchmark(bench / "train_ngram" / "bible" / language / f"{stream}.o{order}.tsv",
                        [(1.5 + 2.5e-7 * n_bytes, 150.0 + i, 1.0)])
    params = {}
    for model, shapes in [("tiny-lm", {"embed": [100, 8], "w": [8, 8]}),
                          ("small-lm", {"embed": [100, 16], "w": [16, 16], "b": [16]})]:
        write_safetensors(resources / "models" / model / "hf" / "model.safetensors", shapes)
        params[model] = sum(math.prod(s) for s in shapes.values())
    for j, language in enumerate(["eng", "hin", "zho"]):
        for model in params:
            tokens = [20 + j, 31, 7 * (j + 1)]
            folder = results / "scores" / "bible" / language
            folder.mkdir(parents=True, exist_ok=True)
            pl.DataFrame({"unit_id": ["a", "b", "c"], "n_chars": [50, 60, 70],
                          "n_tokens": tokens}).write_parquet(folder / f"{model}.native.parquet")
            write_benchmark(bench / "score_pretrained" / "bible" / f"{language}.{model}.tsv",
                            [(12.0 + 4e-11 * params[model] * sum(tokens), 900.0, 3.0)])
    return bench, results, resources, params


@pytest.mark.e2e
def test_fits_recover_known_coefficients_from_synthetic_runs(tmp_path, rules):
    bench, results, resources, params = synthetic_study(tmp_path)
    frame = scale.job_sizes(scale.read_benchmarks(bench, rules), tmp_path, CONFIG, rules)
    assert frame.columns[0] == "family"
    assert dict(zip(frame["rule"], frame["family"])) == {"train_ngram": "n-gram training",
                                                         "score_pretrained": "pretrained scoring"}
    assert scale.family_of("shannon_bets", "word") == "Shannon bets, word bettors"
    assert scale.family_of("shannon_bets", "token-lm") == "Shannon bets, token LMs"
    assert scale.family_of("prepare_corpus") is None
    pretrained = frame.filter(pl.col("rule") == "score_pretrained").sort("job")
    assert sorted(set(pretrained["params"].to_list())) == sorted(params.values())
    assert pretrained.filter(pl.col("language") == "hin")["tokens"].to_list() == [21 + 31 + 14] * 2
    fits = {r["family"]: r for r in scale.fit_families(frame).iter_rows(named=True)}
    assert set(fits) == {"n-gram training", "pretrained scoring"}
    ngram = fits["n-gram training"]
    assert ngram["n"] == 4 and ngram["size"] == "model_bytes"
    assert ngram["a"] == pytest.approx(1.5, rel=1e-9)
    assert ngram["b"] == pytest.approx(2.5e-7, rel=1e-9)
    assert ngram["r2"] == pytest.approx(1.0, abs=1e-12)
    assert ngram["x_min"] == 1_000_000 and ngram["x_max"] == 4_000_000 + 111
    scored = fits["pretrained scoring"]
    assert scored["n"] == 6
    assert scored["a"] == pytest.approx(12.0, rel=1e-9)
    assert scored["b"] == pytest.approx(4e-11, rel=1e-9)
    assert scored["r2"] == pytest.approx(1.0, abs=1e-12)
    memory = {r["family"]: r
              for r in scale.fit_families(frame, y="max_rss_mb").iter_rows(named=True)}
    assert memory["n-gram training"]["y_max"] == 153.0
    assert memory["pretrained scoring"]["a"] == pytest.approx(900.0, rel=1e-12)
    assert memory["pretrained scoring"]["b"] == pytest.approx(0.0, abs=1e-15)  # 900 MB each
    per_language = {r["rule"]: r for r in scale.jobs_per_language(frame).iter_rows(named=True)}
    assert per_language["train_ngram"]["jobs"] == 4
    assert per_language["train_ngram"]["jobs_per_language"] == 2.0
    assert per_language["score_pretrained"]["jobs_per_language"] == 2.0


@pytest.mark.e2e
def test_a_job_without_its_output_is_named(tmp_path, rules):
    bench, results, resources, _ = synthetic_study(tmp_path)
    missing = results / "scores" / "bible" / "zho" / "tiny-lm.native.parquet"
    missing.unlink()
    with pytest.raises(InputError, match="tiny-lm.native.parquet: no such file"):
        scale.job_sizes(scale.read_benchmarks(bench, rules), tmp_path, CONFIG, rules)


#: The outputs the cost model reads, per rule (bench/scale_model.py's _sizes).
READS = {"train_ngram": ["model", "record"], "score_char_ngram": ["scores"],
         "score_word_ngram": ["scores"], "score_subword_ngram": ["scores"],
         "train_tokenizer": ["record"], "train_neural": ["stats"], "score_neural": ["scores"],
         "score_pretrained": ["scores"], "cache_pretrained": ["hf"], "marginal_lm": ["table"],
         "marginal_ngram": ["table"], "marginal_lengths": ["table"],
         "marginal_samples_needed": ["curves"], "marginal_caching": [], "shannon_bets": ["table"],
         "mcc_apertium": [0]}


@pytest.mark.e2e
def test_the_cost_model_reads_rules_the_workflow_has(rules):
    family_rules = {rule for family in scale.FAMILIES for rule in family.rules}
    assert family_rules <= set(READS)
    for rule, outputs in READS.items():
        assert rules[rule].benchmark is not None, rule
        assert rules[rule].benchmark.startswith("benchmarks/"), rule
        for which in outputs:
            assert which in rules[rule].output, (rule, which)
    assert rules["train_ngram"].output["record"] == \
        "results/ngram/{corpus}/{language}/{stream}.o{order}.json"  # constraints left out
