"""The KenLM module: command lines, the shared scoring loop and its hook for unseen tokens (exact,
against a hand-written ARPA file), and training that leaves nothing behind when lmplz fails or
the job is terminated (fake lmplz scripts, no KenLM build needed)."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from fairppl.core.errors import InputError
from fairppl.ngram.kenlm_tool import (
    LOG2_10,
    Charged,
    build_binary_command,
    lmplz_command,
    log10_to_bits,
    private_workdir,
    train_model,
)

ROOT = Path(__file__).resolve().parents[2]


def test_log10_to_bits():
    assert LOG2_10 == pytest.approx(3.321928094887362, abs=1e-15)
    assert log10_to_bits(-1.0) == pytest.approx(3.321928094887362, abs=1e-15)
    assert log10_to_bits(-math.log10(2)) == pytest.approx(1.0, abs=1e-15)
    assert log10_to_bits(0.0) == 0.0


def test_lmplz_command():
    argv = lmplz_command("bin/lmplz", 5, "t.txt", "m.arpa", "tmp")
    assert argv == ["bin/lmplz", "-o", "5", "-S", "20%", "-T", "tmp", "--discount_fallback",
                    "--text", "t.txt", "--arpa", "m.arpa"]
    argv = lmplz_command("lmplz", 3, "t", "a", "d", memory="1G", discount_fallback=False)
    assert argv == ["lmplz", "-o", "3", "-S", "1G", "-T", "d", "--text", "t", "--arpa", "a"]
    argv = lmplz_command("lmplz", 3, "t", "a", "d", discount_fallback=(0.5, 1, 1.5))
    assert argv[7:11] == ["--discount_fallback", "0.5", "1.0", "1.5"]
    with pytest.raises(InputError, match="at least 2"):
        lmplz_command("lmplz", 1, "t", "a", "d")
    with pytest.raises(InputError, match="three positive discounts"):
        lmplz_command("lmplz", 3, "t", "a", "d", discount_fallback=(0.5, 1))
    assert build_binary_command("bb", "m.arpa", "m.kenlm") == ["bb", "-S", "1G", "m.arpa", "m.kenlm"]


# ---------------------------------------------------------------------------------------------
# the scoring loop and its hook

kenlm = pytest.importorskip("kenlm")

from fairppl.ngram.kenlm_tool import load_model, score_tokens  # noqa: E402

# Dyadic log10 values (exact in float32). log10 p(w | h) = bigram(h w) if listed, else
# backoff(h) + unigram(w).
ARPA = """\\data\\
ngram 1=5
ngram 2=2

\\1-grams:
-2\t<unk>\t0
-99\t<s>\t-0.5
-1\t</s>\t0
-0.5\tx\t-0.25
-0.75\ty\t0

\\2-grams:
-0.25\t<s> x
-0.125\tx y

\\end\\
"""


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = tmp_path_factory.mktemp("arpa") / "m.arpa"
    path.write_text(ARPA, encoding="utf-8")
    return load_model(path)


def test_score_tokens_exact_with_hook(model):
    seen = []

    def hook(token):
        seen.append(token)
        return 10.0 * len(token)

    # x|<s> bigram; y|x bigram; zz|y = bo(y) + p(<unk>); </s>|<unk> = 0 + p(</s>)
    got = score_tokens(model, ["x", "y", "zz"], hook)
    assert isinstance(got, Charged)
    assert got.bits_model == pytest.approx((0.25 + 0.125 + 2 + 1) * LOG2_10, abs=1e-12)
    assert got.bits_unseen == 20.0 and got.n_unseen == 1 and seen == ["zz"]
    assert got.bits == got.bits_model + 20.0
    assert got.bits_eos == pytest.approx(1 * LOG2_10, abs=1e-12)
    # No unseen token: the hook is never called; </s>|x = bo(x) + p(</s>).
    got = score_tokens(model, ["x"], hook)
    assert got == Charged(pytest.approx((0.25 + 0.25 + 1) * LOG2_10, abs=1e-12), 0.0, 0,
                          pytest.approx((0.25 + 1) * LOG2_10, abs=1e-12))
    assert seen == ["zz"]
    # The empty sequence pays for its end: </s>|<s> = bo(<s>) + p(</s>).
    assert score_tokens(model, [], hook).bits == pytest.approx(1.5 * LOG2_10, abs=1e-12)


def test_score_tokens_hook_may_refuse(model):
    def refuse(token):
        raise ValueError(f"{token!r} must be known")

    with pytest.raises(ValueError, match="'q' must be known"):
        score_tokens(model, ["x", "q"], refuse)


def test_score_tokens_model_without_unk(tmp_path):
    arpa = tmp_path / "nounk.arpa"
    arpa.write_text(ARPA.replace("ngram 1=5", "ngram 1=4").replace("-2\t<unk>\t0\n", ""),
                    encoding="utf-8")
    m = load_model(arpa)
    assert score_tokens(m, ["x", "y"], lambda t: 0.0).n_unseen == 0
    with pytest.raises(ValueError, match="no probability to unseen tokens.*'q' at position 1"):
        score_tokens(m, ["x", "q"], lambda t: 0.0)


# ---------------------------------------------------------------------------------------------
# training leaves nothing behind


def _fake_program(path: Path, body: str) -> Path:
    """An executable Python script standing in for lmplz or build_binary."""
    path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body), encoding="utf-8")
    path.chmod(0o755)
    return path


# Writes into its -T folder and its --arpa file, like lmplz, then fails.
FAILING_LMPLZ = """
import sys
args = sys.argv[1:]
tmp, arpa = args[args.index("-T") + 1], args[args.index("--arpa") + 1]
open(tmp + "/lmplz-sort-buffer", "w").write("x" * 1000)
open(arpa, "w").write("\\\\data\\\\\\n")
sys.exit(1)
"""

# Writes its files, records its pid, then sleeps until killed.
SLOW_LMPLZ = """
import os, sys, time
args = sys.argv[1:]
tmp, arpa = args[args.index("-T") + 1], args[args.index("--arpa") + 1]
open(tmp + "/lmplz-sort-buffer", "w").write("x" * 1000)
open(arpa, "w").write("partial")
open(os.environ["FAKE_LMPLZ_PID"], "w").write(str(os.getpid()))
time.sleep(60)
"""

# A build_binary that would succeed: copies the ARPA file to the output path.
COPY_BINARY = """
import shutil, sys
shutil.copy(sys.argv[-2], sys.argv[-1])
"""


def test_failing_lmplz_leaves_no_file(tmp_path):
    lmplz = _fake_program(tmp_path / "lmplz", FAILING_LMPLZ)
    build_binary = _fake_program(tmp_path / "build_binary", COPY_BINARY)
    text = tmp_path / "train.txt"
    text.write_text("a b\n", encoding="utf-8")
    out, tmpdir = tmp_path / "out", tmp_path / "tmp"
    out.mkdir()
    tmpdir.mkdir()
    with open(tmp_path / "job.log", "w") as log, pytest.raises(subprocess.CalledProcessError):
        train_model(text, out / "m.kenlm", order=3, lmplz=lmplz, build_binary=build_binary,
                    tmpdir=tmpdir, log=log)
    assert list(out.iterdir()) == []
    assert list(tmpdir.iterdir()) == []
    assert f"+ {lmplz} -o 3" in (tmp_path / "job.log").read_text()


def test_failing_build_binary_leaves_no_part_file(tmp_path):
    lmplz = _fake_program(tmp_path / "lmplz", FAILING_LMPLZ.replace("sys.exit(1)", ""))
    build_binary = _fake_program(tmp_path / "build_binary", COPY_BINARY + "sys.exit(2)\n")
    text = tmp_path / "train.txt"
    text.write_text("a b\n", encoding="utf-8")
    out, tmpdir = tmp_path / "out", tmp_path / "tmp"
    with pytest.raises(subprocess.CalledProcessError) as err:
        train_model(text, out / "m.kenlm", order=3, lmplz=lmplz, build_binary=build_binary,
                    tmpdir=tmpdir)
    assert err.value.returncode == 2
    assert list(out.iterdir()) == []  # the .part copy that build_binary wrote is gone too
    assert list(tmpdir.iterdir()) == []
    # The same fakes with a succeeding build_binary give the model and still an empty tmpdir.
    _fake_program(tmp_path / "build_binary", COPY_BINARY)
    train_model(text, out / "m.kenlm", order=3, lmplz=lmplz, build_binary=build_binary,
                tmpdir=tmpdir)
    # the model and its digest record (sealed, fairppl.core.integrity), nothing else
    assert sorted(p.name for p in out.iterdir()) == [".m.kenlm.sha256", "m.kenlm"]
    assert list(tmpdir.iterdir()) == []


def test_terminated_training_leaves_nothing(tmp_path):
    """SIGTERM (Snakemake cancelling a job) while lmplz runs: the training text, lmplz's files,
    the ARPA file and the model's .part file are all removed, and lmplz itself is killed."""
    lmplz = _fake_program(tmp_path / "lmplz", SLOW_LMPLZ)
    build_binary = _fake_program(tmp_path / "build_binary", COPY_BINARY)
    out, tmpdir, pid_file = tmp_path / "out", tmp_path / "tmp", tmp_path / "lmplz.pid"
    job = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT / "workflow" / "lib")!r})
        from fairppl.ngram.kenlm_tool import private_workdir, train_model
        with private_workdir({str(tmpdir)!r}) as work:
            text = work / "train.txt"
            text.write_text("a b\\n" * 1000)
            train_model(text, {str(out / "m.kenlm")!r}, order=3, lmplz={str(lmplz)!r},
                        build_binary={str(build_binary)!r}, tmpdir=work)
    """)
    proc = subprocess.Popen([sys.executable, "-c", job],
                            env=dict(os.environ, FAKE_LMPLZ_PID=str(pid_file)))
    deadline = time.monotonic() + 30
    while not pid_file.exists() or not pid_file.read_text():
        assert proc.poll() is None, "the job ended before lmplz started"
        assert time.monotonic() < deadline, "fake lmplz never started"
        time.sleep(0.05)
    assert any(tmpdir.rglob("lmplz-sort-buffer"))  # the files exist while lmplz runs
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    assert list(tmpdir.iterdir()) == []
    assert not out.exists() or list(out.iterdir()) == []
    lmplz_pid = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while _alive(lmplz_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(lmplz_pid), "lmplz kept running after its job was terminated"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (killed, not yet reaped by its dead parent's reaper) counts as gone.
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_private_workdir_restores_sigterm_handler(tmp_path):
    before = signal.getsignal(signal.SIGTERM)
    with private_workdir(tmp_path / "t") as work:
        assert work.parent == tmp_path / "t" and work.name.startswith("kenlm-")
        assert signal.getsignal(signal.SIGTERM) is not before
        (work / "f").write_text("x")
    assert signal.getsignal(signal.SIGTERM) is before
    assert list((tmp_path / "t").iterdir()) == []
    with pytest.raises(RuntimeError), private_workdir(tmp_path / "t") as work:
        (work / "f").write_text("x")
        raise RuntimeError("boom")
    assert list((tmp_path / "t").iterdir()) == []
