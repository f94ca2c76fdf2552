"""The test tiers' marks (docs/tests.md): what counts as running Snakemake, the guard that fails
an unmarked test that does, and the marks given at collection."""

import sys
import threading

import pytest

import conftest
from conftest import VENV_BIN, _refuse_unmarked, _runs_snakemake


@pytest.mark.parametrize("args", [
    [str(VENV_BIN / "snakemake"), "-n"],
    "snakemake --cores 2 all",
    ["su", "someone", "-c", "cd /x && .venv/bin/snakemake -n --cores 2"],
    [sys.executable, "-m", "snakemake", "-n"],
    [sys.executable, "-c", "from snakemake.api import SnakemakeApi\nwith SnakemakeApi(s) as a: 0"],
])
def test_these_command_lines_run_snakemake(args):
    assert _runs_snakemake(args)


@pytest.mark.parametrize("args", [
    ["git", "log", "--", "snakemake.log"],
    [sys.executable, "-c", "import snakemake.script"],
    "ls results/snakemake-report",
    [sys.executable, "workflow/scripts/score_lm.py"],
])
def test_these_do_not(args):
    assert not _runs_snakemake(args)


class _Item:
    nodeid = "tests/test_x.py::test_y"

    def __init__(self, marks):
        self.marks = marks

    def get_closest_marker(self, name):
        return name if name in self.marks else None


def _as_current(item, call):
    saved = conftest._CURRENT_ITEM[0]
    conftest._CURRENT_ITEM[0] = item
    try:
        return call()
    finally:
        conftest._CURRENT_ITEM[0] = saved


def test_an_unmarked_test_that_runs_snakemake_fails_naming_itself_and_the_mark():
    with pytest.raises(AssertionError, match=r"tests/test_x.py::test_y runs Snakemake \(snakemake "
                                             r"-n\) but is not marked e2e"):
        _as_current(_Item(set()), lambda: _refuse_unmarked("snakemake -n"))


def test_a_marked_test_and_a_background_thread_pass():
    _as_current(_Item({"e2e"}), lambda: _refuse_unmarked("snakemake -n"))
    failures = []

    def background():  # tests/cluster/slurm_study.py's runs start Snakemake from threads
        try:
            _refuse_unmarked("snakemake -n")
        except AssertionError as err:
            failures.append(err)

    def in_thread():
        thread = threading.Thread(target=background)
        thread.start()
        thread.join()

    _as_current(_Item(set()), in_thread)
    assert failures == []


def test_the_guard_is_on_every_subprocess_of_the_suite():
    # this test is not marked e2e: starting Snakemake here must fail before any process starts
    import subprocess

    with pytest.raises(AssertionError, match="not marked e2e"):
        subprocess.run([str(VENV_BIN / "snakemake"), "--version"], capture_output=True)


def test_a_fixture_that_runs_snakemake_marks_its_tests(request):
    items = [i for i in request.session.items if "study" in getattr(i, "fixturenames", ())]
    if not items:
        pytest.skip("the shared study's tests are not in this session (run with the suite)")
    assert all(i.get_closest_marker("e2e") for i in items)
    data = [i for i in request.session.items
            if "resources_ready" in getattr(i, "fixturenames", ())]
    assert all(i.get_closest_marker("data") for i in data)
    assert request.node.get_closest_marker("e2e") is None


def test_the_sessions_background_runs_are_not_charged_to_the_first_test():
    # study_build (autouse) starts the shared study in whichever test's set-up comes first
    conftest._BACKGROUND_SETUP[0] = True
    try:
        _as_current(_Item(set()), lambda: _refuse_unmarked("snakemake --cores 2"))
    finally:
        conftest._BACKGROUND_SETUP[0] = False
    with pytest.raises(AssertionError):
        _as_current(_Item(set()), lambda: _refuse_unmarked("snakemake --cores 2"))


def test_only_the_whole_suite_starts_the_studys_build_before_the_collection():
    from types import SimpleNamespace

    def config(source="TESTPATHS", keyword="", markexpr="not heavy", collectonly=False):
        return SimpleNamespace(args_source=getattr(pytest.Config.ArgsSource, source),
                               option=SimpleNamespace(keyword=keyword, markexpr=markexpr,
                                                      collectonly=collectonly),
                               getini=lambda name: ["-ra", "-m", "not heavy"])

    assert conftest._whole_suite(config())  # `make test`: pytest alone, pyproject's -m
    assert conftest._whole_suite(config(markexpr=""))
    assert not conftest._whole_suite(config(markexpr="heavy or slurm"))  # `make test-heavy`
    assert not conftest._whole_suite(config(source="ARGS"))  # test paths named
    assert not conftest._whole_suite(config(keyword="slurm"))
    assert not conftest._whole_suite(config(markexpr="not e2e"))  # `make test-fast`
    assert not conftest._whole_suite(config(collectonly=True))


def test_the_cluster_started_early_hands_over_its_outcome_or_its_error(monkeypatch):
    """ClusterStart runs _start_cluster in a thread; the fixture gets what it returned, or its
    exception raised again in the main thread; stopping one that never started a cluster does
    nothing."""
    started = []
    monkeypatch.setattr(conftest, "_start_cluster",
                        lambda: started.append(threading.current_thread().name) or
                        {"swept": None, "why": "no slurmctld here"})
    early = conftest.ClusterStart().start()
    assert early.result() == {"swept": None, "why": "no slurmctld here"}
    assert started == ["slurm-cluster"]  # in its own thread, not the caller's
    early.stop()

    def fail():
        raise RuntimeError("slurmctld did not answer")

    monkeypatch.setattr(conftest, "_start_cluster", fail)
    early = conftest.ClusterStart().start()
    with pytest.raises(RuntimeError, match="slurmctld did not answer"):
        early.result()
    early.stop()


def test_a_tests_folder_follows_its_marks():
    from conftest import _misplaced

    class Item:
        def __init__(self, path, *marks):
            self.fspath, self.marks = path, [pytest.mark.__getattr__(m).mark for m in marks]

        def iter_markers(self):
            return iter(self.marks)

    assert _misplaced(Item("tests/unit/test_a.py")) == ""
    assert _misplaced(Item("tests/workflow/test_a.py", "e2e")) == ""
    assert _misplaced(Item("tests/cluster/test_a.py", "slurm", "e2e")) == ""
    assert _misplaced(Item("tests/unit/test_a.py", "e2e", "data")) == (
        "in tests/unit, belongs in tests/workflow: runs Snakemake (e2e), needs no cluster")
    assert _misplaced(Item("tests/workflow/test_a.py", "slurm", "e2e")).endswith(
        "belongs in tests/cluster: runs on the tests' SLURM cluster (slurm)")
    assert _misplaced(Item("tests/cluster/test_a.py")).startswith(
        "in tests/cluster, belongs in tests/unit")
    assert _misplaced(Item("elsewhere/test_a.py", "e2e")) == ""


def test_the_run_order_puts_the_fast_tier_between_the_studys_readers_and_the_cluster():
    class Item(_Item):
        def __init__(self, nodeid, *marks, fixtures=()):
            super().__init__(set(marks))
            self.nodeid, self.fixturenames = nodeid, list(fixtures)

    items = [Item("tests/unit/test_fast.py::a"),
             Item("tests/unit/test_mixed.py::fast"), Item("tests/unit/test_mixed.py::real",
                                                          "pretrained"),
             Item("tests/cluster/test_c.py::waits", "slurm", fixtures=["slurm_study"]),
             Item("tests/workflow/test_reads.py::a", "e2e", fixtures=["study"]),
             Item("tests/unit/test_fast.py::b"),
             Item("tests/workflow/test_dry.py::a", "e2e"),
             Item("tests/cluster/test_c.py::other", "slurm", fixtures=["cluster"]),
             Item("tests/unit/test_fast2.py::a")]
    conftest.pytest_collection_modifyitems(None, None, items)
    assert [item.nodeid for item in items] == [
        "tests/unit/test_mixed.py::fast", "tests/unit/test_mixed.py::real",  # one module, whole
        "tests/workflow/test_dry.py::a",
        "tests/workflow/test_reads.py::a",  # the study's readers
        "tests/unit/test_fast.py::a", "tests/unit/test_fast.py::b", "tests/unit/test_fast2.py::a",
        "tests/cluster/test_c.py::waits", "tests/cluster/test_c.py::other"]


# --- work done ahead (conftest.Ahead) -------------------------------------------------------


class _Request:
    """A stand-in for pytest's request: fixtures by name."""

    def __init__(self, tmp_path, **fixtures):
        self.fixtures = dict(fixtures, tmp_path_factory=_Factory(tmp_path))

    def getfixturevalue(self, name):
        return self.fixtures[name]


class _Factory:
    def __init__(self, base):
        self.base, self.n = base, 0

    def mktemp(self, name):
        self.n += 1
        folder = self.base / f"{name}{self.n}"
        folder.mkdir()
        return folder


def test_work_not_started_ahead_runs_in_the_test_once_with_its_fixtures(tmp_path):
    calls = []

    def run(folder, tiny):
        calls.append((folder, tiny))
        return "value"

    work = conftest.Ahead("tests/x.py::test_y", run, ("tiny",))
    request = _Request(tmp_path, tiny="model")
    assert work.result(request) == "value" and work.result(request) == "value"
    assert len(calls) == 1 and calls[0][1] == "model" and calls[0][0].is_dir()
    assert not work.claim()  # started: nobody starts it again


def test_work_started_ahead_is_waited_for_and_its_failure_raised_in_the_test(tmp_path):
    release = threading.Event()

    def run(folder):
        release.wait(5)
        raise AssertionError("snakemake failed: the log")

    work = conftest.Ahead("tests/x.py::test_y", run, ())
    assert work.claim()
    thread = threading.Thread(target=work.execute, args=(tmp_path, {}))
    thread.start()
    release.set()
    with pytest.raises(AssertionError, match="snakemake failed: the log"):
        work.result(_Request(tmp_path))  # waits: never runs it a second time
    thread.join()


def test_a_command_run_ahead_runs_niced_in_its_own_session(tmp_path):
    """From the thread of the work done ahead, run_command lowers the command's priority and
    gives it its own session (the session's end can stop it); from the test's own thread it is
    a plain subprocess.run."""
    import os

    probe = [sys.executable, "-c", "import os; print(os.nice(0), os.getsid(0) == os.getpid())"]
    assert conftest.run_command(probe).stdout.split() == [str(os.nice(0)), "False"]
    got = {}

    def ahead_thread():
        conftest._AHEAD_THREAD.active = True
        got["proc"] = conftest.run_command(probe)

    thread = threading.Thread(target=ahead_thread)
    thread.start()
    thread.join()
    niceness, own_session = got["proc"].stdout.split()
    assert int(niceness) == min(19, os.nice(0) + conftest.AHEAD_NICE)
    assert own_session == "True"
