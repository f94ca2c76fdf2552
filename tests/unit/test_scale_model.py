"""bench/scale_model.py without the workflow's rules: a malformed benchmark file named with its
line, an empty folder refused, a safetensors file's parameters counted, paths read with rules
given by hand, and the least-squares line against its closed form. With the rules Snakemake
loads: tests/workflow/test_scale.py."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from fairppl.core.errors import InputError
from test_scale import HEADER, write_safetensors

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import scale_model as scale  # noqa: E402


@pytest.mark.parametrize("text, line, words", [
    (HEADER + "\n1.0\t0:00:01\t100\t1\t1\t1\t0\t0\t50\t1.0\n"
     "abc\t0:00:01\t100\t1\t1\t1\t0\t0\t50\t1.0\n", 3, "column 's' is 'abc'"),
    (HEADER + "\n1.0\t0:00:01\t100\t1\n", 2, "4 tab-separated fields, expected 10"),
    (HEADER + "\n1.0\t0:00:01\tlots\t1\t1\t1\t0\t0\t50\t1.0\n", 2, "column 'max_rss' is 'lots'"),
    (HEADER + "\nNA\t0:00:01\t100\t1\t1\t1\t0\t0\t50\t1.0\n", 2, "column 's' is 'NA'"),
    (HEADER + "\n-1\t0:00:01\t100\t1\t1\t1\t0\t0\t50\t1.0\n", 2, "finite number >= 0"),
    ("seconds,rss\n1.0,100\n", 1, "expected Snakemake's benchmark columns"),
    (HEADER + "\n", 2, "no benchmark row"),
    ("", 1, "empty file"),
])
def test_a_malformed_benchmark_file_is_named_with_its_line(tmp_path, text, line, words):
    path = tmp_path / "score_neural" / "bible" / "eng.char.tsv"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as err:
        scale.read_benchmarks(tmp_path, {})  # no rules: the file alone is read
    assert str(err.value).startswith(f"{path}, line {line}: ")
    assert words in str(err.value)
    assert err.value.line == line


def test_an_empty_folder_is_refused(tmp_path):
    with pytest.raises(InputError, match="no benchmark file"):
        scale.read_benchmarks(tmp_path, {})


def test_safetensors_parameters_counts_every_tensor(tmp_path):
    path = tmp_path / "model.safetensors"
    write_safetensors(path, {"embed": [7, 3], "w": [3, 5, 2], "b": [4]})
    assert scale.safetensors_parameters(path) == 21 + 30 + 4


def test_fit_line_matches_the_closed_form():
    x = np.array([1.0, 2.0, 4.0, 7.0, 11.0])
    y = np.array([2.0, 2.5, 5.0, 6.0, 12.5])
    a, b, r2 = scale.fit_line(x, y)
    sxy = np.sum((x - x.mean()) * (y - y.mean()))
    sxx = np.sum((x - x.mean()) ** 2)
    assert b == pytest.approx(sxy / sxx, rel=1e-12)
    assert a == pytest.approx(y.mean() - b * x.mean(), rel=1e-12)
    r = np.corrcoef(x, y)[0, 1]
    assert r2 == pytest.approx(r * r, rel=1e-12)
    with pytest.raises(ValueError, match="two distinct x"):
        scale.fit_line([3.0, 3.0], [1.0, 2.0])


def test_a_pattern_reads_and_fills_its_wildcards():
    regex = scale.pattern_regex("benchmarks/r/{corpus}/{language}.{model}.{language}.tsv")
    assert regex == (r"benchmarks/r/(?P<corpus>[^/]+?)/(?P<language>[^/]+?)\.(?P<model>[^/]+?)"
                     r"\.(?P=language)\.tsv")
    match = re.fullmatch(regex, "benchmarks/r/bible/eng.qwen2.5-0.5b.eng.tsv")
    assert match.groupdict() == {"corpus": "bible", "language": "eng", "model": "qwen2.5-0.5b"}
    assert re.fullmatch(regex, "benchmarks/r/bible/eng.m.deu.tsv") is None  # a repeat differs
    assert re.fullmatch(regex, "benchmarks/r/a/b/eng.m.eng.tsv") is None  # no slash in a value
    assert scale.fill("results/{corpus}/{language}/{stream}.o{order}.kenlm",
                      {"corpus": "udhr", "language": "hin", "stream": "char", "order": 5,
                       "model": "unused"}) == "results/udhr/hin/char.o5.kenlm"
    with pytest.raises(ValueError, match=r"no value for wildcard 'order' of results/\{x\}\.o"):
        scale.fill("results/{x}.o{order}", {"x": "a", "order": None})


def test_paths_are_read_with_the_rules_given():
    rules = {"r": scale.RulePaths("benchmarks/r/{corpus}/{language}.{model}.tsv", {}),
             "s": scale.RulePaths("benchmarks/s.tsv", {0: "results/s.csv"}),
             "t": scale.RulePaths(None, {0: "results/t.csv"})}
    parsed = scale.parse_benchmark_path("r/bible/zho.tiny.lm.tsv", rules)
    assert (parsed["rule"], parsed["corpus"], parsed["language"], parsed["model"]) == \
        ("r", "bible", "zho", "tiny.lm")
    assert scale.parse_benchmark_path("s.tsv", rules)["rule"] == "s"
    assert scale.parse_benchmark_path("t/x.tsv", rules)["rule"] == "t"  # t has no benchmark
    with pytest.raises(InputError, match=r"r/bible\.tsv: benchmark path of rule r does not "
                                         r"match benchmarks/r/\{corpus\}"):
        scale.parse_benchmark_path("r/bible.tsv", rules)
