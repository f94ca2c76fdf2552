"""The CLI (`fairppl char-ngram`): exact numbers from a hand-written model, and every kind of
input that would make them meaningless refused with a message naming the file (and line)."""

import json
import math
import re

import pytest

from fairppl.cli.app import main

LOG2_10 = math.log2(10)

# A character bigram model (KenLM's probing model needs order 2) whose one bigram, "b b", never
# occurs below: every score is the unigram log10 p (backoff 0). The space is ▁; <unk> has mass.
CHAR_ARPA = """\\data\\
ngram 1=6
ngram 2=1

\\1-grams:
-1.0\t<unk>\t0
0\t<s>\t0
-0.5\t</s>\t0
-0.5\ta\t0
-0.7\tb\t0
-0.9\t\u2581\t0

\\2-grams:
-0.1\tb b

\\end\\
"""

# A word bigram model (fairppl.ngram.word's UNK class is the word <oov>).
WORD_ARPA = """\\data\\
ngram 1=6
ngram 2=1

\\1-grams:
-1.0\t<unk>\t0
0\t<s>\t0
-0.5\t</s>\t0
-0.3\tab\t0
-0.6\t<oov>\t0
-0.6\ta\t0

\\2-grams:
-0.1\ta a

\\end\\
"""


@pytest.fixture
def files(tmp_path):
    def write(name, text):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return str(path)
    return write


def run(capsys, *argv):
    rc = main(["char-ngram", "--quiet", *argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_exact_numbers(files, capsys):
    model = files("char.o1.arpa", CHAR_ARPA)
    text = files("units.txt", "ab\n  b  a \n")  # normalised to "b a"
    english = files("eng.txt", "abab\nb\n")
    rc, out, err = run(capsys, "--model", model, "--text", text, "--english", english)
    assert rc == 0, err
    got = dict(line.split("\t") for line in out.strip().splitlines())
    # "ab": a, b, </s>; "b a": b, ▁, a, </s> (log10 probabilities of the model above).
    bits = (0.5 + 0.7 + 0.5 + 0.7 + 0.9 + 0.5 + 0.5) * LOG2_10
    assert got["units"] == "2" and got["unseen_chars"] == "0"
    assert float(got["bits_total"]) == pytest.approx(bits, abs=1e-4)
    assert float(got["bits_per_utterance"]) == pytest.approx(bits / 2, abs=1e-4)
    assert float(got["bits_per_char"]) == pytest.approx(bits / 5, abs=1e-4)
    assert float(got["bits_per_byte"]) == pytest.approx(bits / 5, abs=1e-4)
    assert float(got["bpec"]) == pytest.approx(bits / 5, abs=1e-4)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", r"units.txt: empty file: expected a UTF-8 text file, one unit per line"),
        ("ab\n \t \nb\n", r"units.txt, line 2: empty unit \(blank or whitespace only\)"),
        ("ab\n\nb\n", r"units.txt, line 2: empty unit"),
        ("ab\nb\n\n", r"units.txt, line 3: empty unit"),
        ("a\u2581b\n", r"units.txt, line 1: character 1 of the unit, U\+2581"),
    ],
)
def test_bad_text_is_refused(files, capsys, text, expected):
    model = files("char.o1.arpa", CHAR_ARPA)
    rc, out, err = run(capsys, "--model", model, "--text", files("units.txt", text))
    assert rc == 2 and out == ""
    assert err.startswith("error: ") and re.search(expected, err), err


def test_missing_files_are_named(files, capsys, tmp_path):
    model = files("char.o1.arpa", CHAR_ARPA)
    rc, _, err = run(capsys, "--model", model, "--text", str(tmp_path / "none.txt"))
    assert rc == 2 and f"{tmp_path / 'none.txt'}: no such file" in err
    rc, _, err = run(capsys, "--model", str(tmp_path / "m.kenlm"), "--text", files("u.txt", "a\n"))
    assert rc == 2 and f"{tmp_path / 'm.kenlm'}: no such file: expected a KenLM model" in err
    junk = files("junk.kenlm", "this is not a language model\n")
    rc, _, err = run(capsys, "--model", junk, "--text", files("u.txt", "a\n"))
    assert rc == 2 and f"{junk}: not a KenLM model" in err


def test_word_model_is_refused(files, capsys):
    model = files("word-v2.o1.arpa", WORD_ARPA)
    rc, out, err = run(capsys, "--model", model, "--text", files("units.txt", "ab a\n"))
    assert rc == 2 and out == ""
    assert f"{model}: the model's vocabulary holds the multi-character token(s) ['<oov>', 'ab']" \
        in err, err


def test_record_of_another_stream_is_refused(files, capsys, tmp_path):
    model = files("word-v2.o1.kenlm", CHAR_ARPA)  # the vocabulary alone looks like characters
    (tmp_path / "word-v2.o1.json").write_text(json.dumps({"stream": "word-v2"}), encoding="utf-8")
    rc, _, err = run(capsys, "--model", model, "--text", files("units.txt", "ab\n"))
    assert rc == 2 and "says stream 'word-v2'; expected a character model" in err, err


def test_model_knowing_no_character_is_refused(files, capsys):
    model = files("char.o1.arpa", CHAR_ARPA)
    rc, out, err = run(capsys, "--model", model, "--text", files("units.txt", "xyz\nq\n"))
    assert rc == 2 and out == ""
    assert f"{model}: none of the 4 characters of" in err, err


def test_misaligned_english_is_refused(files, capsys):
    model = files("char.o1.arpa", CHAR_ARPA)
    text, english = files("units.txt", "ab\nb\n"), files("eng.txt", "ab\n")
    rc, out, err = run(capsys, "--model", model, "--text", text, "--english", english)
    assert rc == 2 and out == ""
    assert f"{english}: 1 units, {text} has 2; expected aligned files" in err, err


def test_python_m_runs_the_same_command(files, capsys):
    """``python -m fairppl.cli`` is the ``fairppl`` entry point: the same numbers on stdout and
    the same refusal (exit status 2, the message on stderr)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    import fairppl

    model = files("char.o1.arpa", CHAR_ARPA)
    text = files("units.txt", "ab\n  b  a \n")
    library = str(Path(fairppl.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (library, os.environ.get("PYTHONPATH", "")) if p)}

    def module(*argv):
        return subprocess.run([sys.executable, "-m", "fairppl.cli", "char-ngram", "--quiet",
                               *argv], capture_output=True, text=True, env=env, timeout=120)

    done = module("--model", model, "--text", text)
    assert done.returncode == 0, done.stderr
    assert done.stdout == run(capsys, "--model", model, "--text", text)[1]
    refused = module("--model", model, "--text", files("empty.txt", ""))
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.strip() == run(capsys, "--model", model, "--text",
                                         files("empty.txt", ""))[2].strip()
