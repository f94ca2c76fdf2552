"""A real single-node SLURM cluster for the tests: Debian's slurm-wlm, munge, slurmdbd and a
socket-only MariaDB for accounting (as users' clusters have), started as root without systemd.
As on a site's cluster, accounting enforces associations (a job of an account the cluster does
not have is refused; root's jobs go to :data:`ACCOUNT`), the node has a GPU that SLURM schedules
and accounts (a GRES without hardware: a job asking `--gpus=1` gets it and runs on the CPU), and
the compute node is offline: slurmd, and so every job, runs in a network namespace of its own
whose only link leads to slurmctld's host, with no route beyond (:data:`NETNS`).

Everything but the configuration lives in one state folder (spool, logs, the database); the
configuration goes to /etc/slurm (a job's own ``srun`` reads only the default path), refused where
a site's own exists already and removed at the end (a marker file tells a test cluster's, and
:func:`sweep_stale` clears one that a killed run left behind); and :meth:`Cluster.stop` stops exactly the daemons :meth:`Cluster.start`
started, by the PIDs it recorded (never by name). Used by the ``slurm_cluster`` fixture of
``tests/cluster/test_slurm.py``; also runnable by hand::

    python tests/cluster/slurm_cluster.py start DIR   # prints the environment line to source
    python tests/cluster/slurm_cluster.py stop DIR

(a cluster started by hand has no running owner once `start` returns: the next test session
sweeps it as stale.)

:func:`unavailable` says why a machine cannot run it (not root, no apt-get, no cgroup v1 memory
controller, ports taken); the tests skip with that sentence instead of passing silently.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

#: Debian packages of the cluster (Debian 12: Slurm 22.05).
PACKAGES = ("slurm-wlm", "munge", "slurmdbd", "mariadb-server")
#: The daemons' TCP ports (slurmctld, slurmd, slurmdbd): Slurm's defaults.
PORTS = (6817, 6818, 6819)
#: MariaDB's default socket: slurmdbd's MySQL client connects to `localhost` through it.
MYSQL_SOCKET = Path("/run/mysqld/mysqld.sock")
MUNGE_SOCKET_DIR = Path("/run/munge")
#: Where the configuration goes: the default path, because a job's own `srun` finds no other
#: (slurmd does not pass a user's SLURM_CONF on to the job step).
SLURM_ETC = Path("/etc/slurm")
CONFIG_FILES = ("slurm.conf", "cgroup.conf", "slurmdbd.conf", "gres.conf")
#: Written beside the configuration: the state folder of the cluster that owns it, so that a test
#: run killed before its clean-up (SIGKILL, a CI timeout) is swept by the next one
#: (:func:`sweep_stale`) instead of leaving daemons running and the SLURM tests skipped for good.
MARKER = SLURM_ETC / "fairppl-test-cluster"
#: The daemons a test cluster starts (their process names, as /proc/PID/comm shows them).
DAEMONS = ("munged", "mariadbd", "slurmdbd", "slurmctld", "slurmd")
PARTITION = "fairppl"
CLUSTER_NAME = "fairppl"
#: The account every job is charged to: accounting enforces associations
#: (`AccountingStorageEnforce=associations`), so a job of another account is refused at
#: submission, as on a site's cluster; root's default account.
ACCOUNT = "fairppl"
#: The compute node runs offline: slurmd (and so every job) in a network namespace of its own,
#: joined to the host by a pair of virtual Ethernet devices and nothing else. The jobs reach
#: slurmctld on the host's end (:data:`HOST_ADDR`) and no other network: there is no route out
#: (a connection anywhere else fails at once, "Network is unreachable").
NETNS = "fairppl-jobs"
VETH_HOST, VETH_NODE = "fairppl-h", "fairppl-n"
HOST_ADDR, NODE_ADDR = "10.213.213.1", "10.213.213.2"


def _port_taken(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def unavailable() -> str | None:
    """Why this machine cannot run the test cluster, or None when it can."""
    if os.name != "posix" or os.geteuid() != 0:
        return "the SLURM tests start slurmctld, slurmd, slurmdbd and MariaDB as root; not root here"
    if not Path("/sys/fs/cgroup/memory").is_dir():
        return "no cgroup v1 memory controller at /sys/fs/cgroup/memory (SLURM's memory limits)"
    missing = [p for p in PACKAGES if not _installed(p)]
    if missing and shutil.which("apt-get") is None:
        return f"the Debian packages {', '.join(missing)} are missing and there is no apt-get"
    taken = [p for p in PORTS if _port_taken(p)]
    if taken:
        return f"ports {taken} are taken: a SLURM cluster already runs on this machine"
    marker = _read_marker()
    if marker:
        return (f"the test cluster of another running session (pid {marker[1] or '?'}) "
                f"holds {SLURM_ETC}")
    existing = [str(SLURM_ETC / f) for f in CONFIG_FILES if (SLURM_ETC / f).exists()]
    if existing:
        return f"{', '.join(existing)} exist: this machine has a SLURM configuration of its own"
    if MYSQL_SOCKET.exists() and _socket_answers(MYSQL_SOCKET):
        return f"{MYSQL_SOCKET} answers: a MariaDB/MySQL server already runs on this machine"
    if shutil.which("ip") is None:
        return "no `ip` (iproute2): the test node runs in a network namespace of its own"
    if Path("/run/netns", NETNS).exists():
        return f"the network namespace {NETNS} exists: another test cluster's compute node"
    return None


def _socket_answers(path: Path) -> bool:
    """Whether a server accepts connections on the Unix socket ``path`` (a socket file left by
    a killed server does not)."""
    import socket

    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.settimeout(2)
    try:
        client.connect(str(path))
        return True
    except OSError:
        return False
    finally:
        client.close()


def _installed(package: str) -> bool:
    proc = subprocess.run(["dpkg-query", "-W", "-f", "${Status}", package],
                          capture_output=True, text=True)
    return proc.returncode == 0 and proc.stdout.strip() == "install ok installed"


def install_packages(log) -> float:
    """apt-get install the cluster's packages that are missing; returns the seconds it took."""
    missing = [p for p in PACKAGES if not _installed(p)]
    t0 = time.monotonic()
    if missing:
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        cmd = ["apt-get", "install", "-y", "-q", "--no-install-recommends", *missing]
        proc = subprocess.run(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
        if proc.returncode != 0:  # a stale package index: update once, then retry
            subprocess.run(["apt-get", "update", "-q"], env=env, stdout=log,
                           stderr=subprocess.STDOUT)
            subprocess.run(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, check=True)
    return time.monotonic() - t0


def _real_memory_mb() -> int:
    """What `slurmd -C` reports for this node (MB)."""
    out = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, check=True).stdout
    for field in out.split():
        if field.startswith("RealMemory="):
            return int(field.split("=", 1)[1])
    raise RuntimeError(f"`slurmd -C` printed no RealMemory: {out!r}")


class Cluster:
    """One node, one partition (:data:`PARTITION`), accounting through slurmdbd + MariaDB.

    ``cpus``: the node's CPUs as SLURM sees them (default: the machine's; more oversubscribes its
    cores, for jobs that mostly start up and wait); ``memory_mb``: the node's memory as SLURM
    sees it (default: what `slurmd -C` reports minus 2 GB); ``nice``: the niceness of every job
    (at 19 the jobs take only the CPU time that the processes at normal priority leave idle).
    Each job's processes inherit slurmd's niceness
    (`PropagatePrioProcess=0`), and a task prolog sets the same on the job's autogroup: where the
    kernel groups processes by session (`kernel.sched_autogroup_enabled`, Debian's default),
    niceness only ranks processes within one session, and each job is a session of its own
    (its slurmstepd's), which would otherwise get as much CPU as the whole test session."""

    def __init__(self, root: str | Path, cpus: int | None = None, memory_mb: int | None = None,
                 nice: int = 0):
        self.root = Path(root).resolve()
        self.cpus = cpus or os.cpu_count() or 1
        self.memory_mb = memory_mb
        self.nice = nice
        self.host = socket.gethostname().split(".")[0]
        self.pids: dict[str, int] = {}
        self.made_dirs: list[Path] = []
        self.written: list[Path] = []
        self.netns = False

    # -- files ----------------------------------------------------------------------------
    @property
    def conf(self) -> Path:
        return SLURM_ETC / "slurm.conf"

    @property
    def env(self) -> dict[str, str]:
        """The environment of every SLURM client (sbatch, squeue, sacct, snakemake)."""
        return dict(os.environ, SLURM_CONF=str(self.conf))

    def _write_configs(self) -> None:
        etc = SLURM_ETC
        etc.mkdir(parents=True, exist_ok=True)
        self.written = [etc / f for f in CONFIG_FILES] + [MARKER]
        # the state folder, and the process that owns the cluster (a live owner is never swept)
        MARKER.write_text(f"{self.root}\n{os.getpid()}\n", encoding="utf-8")
        for sub in ("state", "spool", "log", "mysql"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        memory = self.memory_mb or max(1024, _real_memory_mb() - 2048)
        self.memory_mb = memory
        # more CPUs than cores: slurmd must take the configured count, not the hardware's
        overrides = ("SlurmdParameters=config_overrides\n"
                     if self.cpus > (os.cpu_count() or 1) else "")
        r = self.root
        (etc / "slurm.conf").write_text(f"""\
# Written by tests/cluster/slurm_cluster.py: one node, accounting through slurmdbd.
ClusterName={CLUSTER_NAME}
SlurmctldHost={self.host}({HOST_ADDR})
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool
SlurmctldPidFile={r}/state/slurmctld.pid
SlurmdPidFile={r}/spool/slurmd.pid
SlurmctldLogFile={r}/log/slurmctld.log
SlurmdLogFile={r}/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ReturnToService=2
MpiDefault=none
ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup
JobAcctGatherType=jobacct_gather/cgroup
JobAcctGatherFrequency=1
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStorageEnforce=associations
AccountingStorageTRES=gres/gpu
GresTypes=gpu
JobCompType=jobcomp/none
AccountingStoreFlags=job_comment
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=500
EnforcePartLimits=ALL
MinJobAge=600
KillWait=5
SchedulerParameters=sched_interval=2
SchedulerTimeSlice=5
MessageTimeout=20
PropagatePrioProcess=0
TaskProlog={r}/task_prolog.sh
{overrides}NodeName={self.host} NodeAddr={NODE_ADDR} CPUs={self.cpus} RealMemory={memory} Gres=gpu:1 State=UNKNOWN
PartitionName={PARTITION} Nodes={self.host} Default=YES MaxTime=INFINITE State=UP
""", encoding="utf-8")
        (etc / "cgroup.conf").write_text("""\
CgroupPlugin=cgroup/v1
ConstrainCores=no
ConstrainRAMSpace=yes
ConstrainSwapSpace=yes
AllowedSwapSpace=0
""", encoding="utf-8")
        # one GPU that SLURM schedules and accounts, without hardware: the jobs asking for it
        # (`--gpus=1`) run on the CPU like the others
        (etc / "gres.conf").write_text(f"""\
NodeName={self.host} Name=gpu File=/dev/null
""", encoding="utf-8")
        dbd = etc / "slurmdbd.conf"
        dbd.write_text(f"""\
AuthType=auth/munge
DbdHost=localhost
DbdAddr=127.0.0.1
SlurmUser=root
PidFile={r}/state/slurmdbd.pid
LogFile={r}/log/slurmdbd.log
DebugLevel=info
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=root
StorageLoc=fairppl_slurm_acct
""", encoding="utf-8")
        dbd.chmod(0o600)  # slurmdbd refuses a readable one
        prolog = self.root / "task_prolog.sh"
        prolog.write_text(f"""#!/bin/sh
# Written by tests/cluster/slurm_cluster.py; run before each task of a job, in the job's session:
# its autogroup at the cluster's niceness (no autogroup file where the kernel has autogroups off,
# and then the processes' own niceness, inherited from slurmd, is enough).
[ -w /proc/self/autogroup ] && echo {self.nice} > /proc/self/autogroup
exit 0
""", encoding="utf-8")
        prolog.chmod(0o755)

    # -- daemons --------------------------------------------------------------------------
    def _spawn(self, name: str, cmd: list[str], env: dict | None = None) -> None:
        with open(self.root / "log" / f"{name}.out", "ab") as log:  # the daemon keeps its copy
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                    env=env or self.env, start_new_session=True)
        self.pids[name] = proc.pid
        (self.root / "pids").mkdir(exist_ok=True)
        (self.root / "pids" / name).write_text(str(proc.pid))

    def _mkdir_run(self, path: Path, owner: str | None = None) -> None:
        if not path.exists():
            path.mkdir(parents=True)
            self.made_dirs.append(path)
            with open(self.root / "made_dirs", "a", encoding="utf-8") as record:
                record.write(f"{path}\n")
        if owner:
            shutil.chown(path, owner, owner)

    def _wait(self, what: str, check, seconds: float = 60.0) -> None:
        t0 = time.monotonic()
        while time.monotonic() - t0 < seconds:
            if check():
                return
            for name, pid in self.pids.items():
                if not _alive(pid):
                    raise RuntimeError(f"{name} (pid {pid}) died while waiting for {what}; "
                                       f"see {self.root / 'log'}")
            time.sleep(0.5)
        raise RuntimeError(f"timed out after {seconds:.0f} s waiting for {what}; "
                           f"see {self.root / 'log'}")

    def _run(self, *cmd: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(list(cmd), capture_output=True, text=True, env=self.env, check=check)

    def start(self) -> "Cluster":
        """Start munged, MariaDB, slurmdbd, slurmctld and slurmd; return when the node is idle
        and accounting answers. On any failure the daemons started so far are stopped."""
        try:
            return self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> "Cluster":
        self._write_configs()
        # munge: its key ships with the package; the socket folder does not survive a reboot
        self._mkdir_run(MUNGE_SOCKET_DIR, "munge")
        self._spawn("munged", ["setpriv", "--reuid=munge", "--regid=munge", "--init-groups",
                                      "munged", "--foreground"])
        self._wait("munge", lambda: subprocess.run(
            ["sh", "-c", "munge -n | unmunge"], capture_output=True).returncode == 0)
        # MariaDB, socket only, its data in the state folder
        self._mkdir_run(MYSQL_SOCKET.parent, "mysql")
        data = self.root / "mysql"
        shutil.chown(data, "mysql", "mysql")
        subprocess.run(["mariadb-install-db", f"--datadir={data}", "--user=mysql",
                        "--auth-root-authentication-method=socket", "--skip-test-db"],
                       capture_output=True, check=True)
        self._spawn("mariadbd", ["mariadbd", f"--datadir={data}", "--user=mysql",
                                 "--skip-networking", f"--socket={MYSQL_SOCKET}",
                                 f"--pid-file={data / 'mariadbd.pid'}"])
        self._wait("MariaDB", lambda: subprocess.run(
            ["mariadb", f"--socket={MYSQL_SOCKET}", "-e", "select 1"],
            capture_output=True).returncode == 0)
        self._spawn("slurmdbd", ["slurmdbd", "-D"])
        self._wait("slurmdbd", lambda: self._run("sacctmgr", "-n", "list", "cluster",
                                                 check=False).returncode == 0)
        self._run("sacctmgr", "-i", "add", "cluster", CLUSTER_NAME, check=False)
        self._run("sacctmgr", "-i", "add", "account", ACCOUNT, f"cluster={CLUSTER_NAME}",
                  check=False)
        self._run("sacctmgr", "-i", "add", "user", "root", f"account={ACCOUNT}",
                  f"defaultaccount={ACCOUNT}", f"cluster={CLUSTER_NAME}", check=False)
        self._run("sacctmgr", "-i", "modify", "user", "root", "set",
                  f"defaultaccount={ACCOUNT}", check=False)
        self._make_netns()
        self._spawn("slurmctld", ["slurmctld", "-D", "-i"])
        self._wait("slurmctld", lambda: self._run("scontrol", "ping", check=False)
                   .stdout.count("UP") > 0)
        # nsenter joins the network namespace only (`ip netns exec` would remount /sys and lose
        # the cgroup controllers slurmd needs); it and `nice` exec slurmd in turn: the recorded
        # PID is slurmd's
        self._spawn("slurmd", ["nsenter", f"--net=/run/netns/{NETNS}",
                               "nice", "-n", str(self.nice), "slurmd", "-D"])
        self._wait("the node to be idle", lambda: "idle" in self._run(
            "sinfo", "-h", "-o", "%t", check=False).stdout)
        self._wait("accounting", lambda: self._run("sacct", "-n", "-X", "-S", "now-1hour",
                                                  check=False).returncode == 0)
        return self

    def _make_netns(self) -> None:
        """The compute node's network namespace (:data:`NETNS`): loopback, and one virtual
        Ethernet link to the host, no route beyond it. Recorded in the state folder for
        :func:`sweep_stale`."""
        (self.root / "netns").write_text(f"{NETNS}\n", encoding="utf-8")
        for cmd in (["ip", "netns", "add", NETNS],
                    ["ip", "link", "add", VETH_HOST, "type", "veth", "peer", "name", VETH_NODE],
                    ["ip", "link", "set", VETH_NODE, "netns", NETNS],
                    ["ip", "addr", "add", f"{HOST_ADDR}/30", "dev", VETH_HOST],
                    ["ip", "link", "set", VETH_HOST, "up"],
                    ["ip", "-n", NETNS, "addr", "add", f"{NODE_ADDR}/30", "dev", VETH_NODE],
                    ["ip", "-n", NETNS, "link", "set", VETH_NODE, "up"],
                    ["ip", "-n", NETNS, "link", "set", "lo", "up"]):
            subprocess.run(cmd, capture_output=True, text=True, check=True)
        self.netns = True

    def stop(self) -> None:
        """Stop the daemons this object started, by PID (the last started first)."""
        for name in reversed(list(self.pids)):
            _stop_pid(self.pids[name])
        self.pids.clear()
        if self.netns:
            _remove_netns()
            self.netns = False
        for path in reversed(self.made_dirs):
            shutil.rmtree(path, ignore_errors=True)
        self.made_dirs.clear()
        for path in self.written:
            path.unlink(missing_ok=True)
        self.written.clear()

    def record_client(self, pid: int) -> None:
        """A Snakemake run on the cluster, leader of its own session (the tests' background run):
        :func:`sweep_stale` ends its session with the daemons when its test session was killed."""
        with open(self.root / "clients", "a", encoding="utf-8") as record:
            record.write(f"{pid}\n")

    # -- queries --------------------------------------------------------------------------
    def sacct(self, *fields: str, since: str = "now-1day") -> list[dict]:
        """Accounting records (one per job and step) with the given fields."""
        out = self._run("sacct", "-a", "-P", "-n", "-S", since,
                        "--format", ",".join(fields)).stdout
        return [dict(zip(fields, line.split("|"))) for line in out.splitlines() if line]


def sweep_stale() -> str | None:
    """Stop what a killed earlier test cluster left behind, from the state folder its marker
    names, unless the process that started it still runs: its daemons by their recorded PIDs (only where /proc still shows that daemon under the
    PID), the /run folders it made, its configuration files. Returns what was swept, or None when
    there was no marker (a configuration without one is a site's own, and is never touched)."""
    stale_socket = None
    if MYSQL_SOCKET.is_socket() and not _socket_answers(MYSQL_SOCKET):
        MYSQL_SOCKET.unlink()  # a killed MariaDB's socket, which no server listens on
        stale_socket = f"a stale MariaDB socket {MYSQL_SOCKET} (no server behind it)"
    marker = _read_marker()
    if marker is None:
        return stale_socket
    root, owner = marker
    if owner is not None and owner != os.getpid() and _alive(owner):
        return None  # its owner still runs (another test session): not stale
    stopped = []
    clients = root / "clients"
    for pid in map(int, clients.read_text().split() if clients.is_file() else ()):
        try:
            ours = b"snakemake" in Path(f"/proc/{pid}/cmdline").read_bytes() and \
                os.getsid(pid) == pid
        except OSError:
            continue
        if ours:  # not a reused PID: the leader of the run's session, as recorded
            os.killpg(pid, signal.SIGKILL)
            stopped.append(f"the Snakemake run of session {pid}")
    for name in reversed(DAEMONS):  # slurmd first, munged last
        pidfile = root / "pids" / name
        if not pidfile.is_file():
            continue
        pid = int(pidfile.read_text())
        try:
            comm = Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            continue
        if comm != name[:15]:
            continue  # the PID was reused by another process
        if name == "slurmd":  # the jobs it still runs, before their daemon goes
            subprocess.run(["scancel", "--full", "--user", "root"], capture_output=True,
                           env=dict(os.environ, SLURM_CONF=str(SLURM_ETC / "slurm.conf")))
        _stop_pid(pid)
        stopped.append(f"{name} ({pid})")
    if (root / "netns").is_file():
        _remove_netns()
        stopped.append(f"the network namespace {NETNS}")
    made = root / "made_dirs"
    if made.is_file():
        for line in reversed(made.read_text(encoding="utf-8").splitlines()):
            shutil.rmtree(line, ignore_errors=True)
    for name in CONFIG_FILES:
        (SLURM_ETC / name).unlink(missing_ok=True)
    MARKER.unlink()
    shutil.rmtree(root, ignore_errors=True)
    if root.parent.name.startswith("fairppl-slurm-"):  # the fixture's folder around it
        shutil.rmtree(root.parent, ignore_errors=True)
    if stale_socket:
        stopped.append(stale_socket)
    return (f"swept a test cluster left by a killed run ({root}): stopped "
            f"{', '.join(stopped) or 'no daemon still running'}")


def _remove_netns() -> None:
    """Remove the compute node's network namespace and the host's end of its link (the other
    end goes with the namespace)."""
    subprocess.run(["ip", "link", "del", VETH_HOST], capture_output=True)
    subprocess.run(["ip", "netns", "del", NETNS], capture_output=True)


def set_autogroup_nice(pid: int, nice: int) -> None:
    """Niceness of the autogroup (the session's scheduling group) of process ``pid``, where the
    kernel has autogroups (see :class:`Cluster`)."""
    path = Path(f"/proc/{pid}/autogroup")
    if path.exists():
        path.write_text(f"{nice}\n")


def popen_niced(cmd: list[str], nice: int, **kwargs) -> subprocess.Popen:
    """``cmd`` started at niceness ``nice`` in a session of its own (one killpg ends it and its
    children), whose autogroup gets the same niceness: work in the background of the tests,
    on the CPU time they leave idle. ``kwargs`` go to :class:`subprocess.Popen`."""
    child = subprocess.Popen(["nice", "-n", str(nice), *cmd], start_new_session=True, **kwargs)
    set_autogroup_nice(child.pid, nice)
    return child


def _read_marker() -> tuple[Path, int | None] | None:
    """The marker's state folder and owning process (None for a marker of an older version), or
    None without a marker."""
    if not MARKER.is_file():
        return None
    lines = MARKER.read_text(encoding="utf-8").split()
    return Path(lines[0]), int(lines[1]) if len(lines) > 1 else None


def _stop_pid(pid: int, seconds: float = 20.0) -> None:
    """SIGTERM, then SIGKILL after ``seconds``; reaped where it is our child."""
    if _alive(pid):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + seconds
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _alive(pid: int) -> bool:
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("start", "stop"):
        print(__doc__)
        return 2
    root = Path(argv[1])
    if argv[0] == "start":
        why = unavailable()
        if why:
            print(f"cannot start: {why}", file=sys.stderr)
            return 1
        with open(root.mkdir(parents=True, exist_ok=True) or root / "install.log", "ab") as log:
            install_packages(log)
        cluster = Cluster(root).start()
        print(f"export SLURM_CONF={cluster.conf}")
        print(f"# daemons: {cluster.pids} "
              f"(stop: python tests/cluster/slurm_cluster.py stop {root})")
        return 0
    marker = _read_marker()
    if marker is None or marker[0] != root.resolve():
        print(f"no test cluster of {root} is configured in {SLURM_ETC}", file=sys.stderr)
        return 1
    print(sweep_stale())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
