"""OS-level hardening of the sandbox worker: each layer, tested by a child that attacks after harden()."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from arena.sandbox.jail.harden import LAYERS, HardenReport, harden
from arena.sandbox.jail.probe import probe

if not sys.platform.startswith("linux"):
    pytest.skip("worker hardening is Linux-only", allow_module_level=True)

ROOT = str(Path(__file__).resolve().parents[3])
IS_ROOT = os.geteuid() == 0
_UIDS = itertools.count(61000 + (os.getpid() % 200) * 100)

# The child: imports everything it needs, hardens, reports, attacks, then proves it still works.
CHILD = r"""
import ctypes, errno, json, os, resource, signal, socket, sys, threading, time
sys.path.insert(0, sys.argv[1])
from arena.sandbox.jail.harden import harden
opts, action, arg = json.loads(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4])
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
libc.ptrace.restype = ctypes.c_long

def say(**kw):
    sys.stdout.write(json.dumps(kw) + "\n")
    sys.stdout.flush()

def attempt(fn, *args):
    try:
        value = fn(*args)
    except BaseException as exc:
        return {"ok": False, "exc": type(exc).__name__, "errno": getattr(exc, "errno", None)}
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        value = repr(value)
    return {"ok": True, "value": value}

def write_file(path):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    return {"open": True, "write": attempt(os.write, fd, b"data")}

def connect(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(3)
    return {"socket": True, "connect": attempt(s.connect, ("127.0.0.1", port))}

def fork():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return "forked"

def read(path):
    with open(path, "rb") as fh:
        return fh.read(200).decode(errors="replace")

def alloc():
    big = attempt(bytearray, 2**30)
    small = len(bytearray(10 * 2**20))
    return {"big": big, "small": small}

def burn():
    end = time.monotonic() + 15
    while time.monotonic() < end:
        pass
    return "burnt"

def open_many():
    fds = []
    for _ in range(64):
        try:
            fds.append(os.open("/dev/null", os.O_RDONLY))
        except OSError as exc:
            return {"opened": len(fds), "errno": exc.errno}
    return {"opened": len(fds)}

def kill_self():
    got = []
    signal.signal(signal.SIGUSR1, lambda *a: got.append(1))
    os.kill(os.getpid(), signal.SIGUSR1)
    signal.raise_signal(signal.SIGUSR1)
    return len(got)

def fs_mutations(d):
    return {
        "unlink": attempt(os.unlink, d + "/victim.txt"),
        "mkdir": attempt(os.mkdir, d + "/newdir"),
        "rename": attempt(os.rename, d + "/victim.txt", d + "/renamed.txt"),
        "chmod": attempt(os.chmod, d + "/victim.txt", 0o777),
        "symlink": attempt(os.symlink, "/etc/passwd", d + "/link"),
    }

def thread():
    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()
    return "thread ran"

def import_new():
    import xml.dom.minidom  # not imported before hardening
    return "imported"

def compute():
    import random, math
    rng = random.Random(7)
    xs = sorted(rng.random() for _ in range(20000))
    try:
        {}["missing"]
    except KeyError as exc:
        caught = repr(exc)
    return {"n": len(xs), "pi": round(math.pi, 3), "caught": caught, "cwd": attempt(os.getcwd),
            "urandom": len(os.urandom(8)), "pid": os.getpid() > 0, "time": time.time() > 0,
            "limits": resource.getrlimit(resource.RLIMIT_NOFILE)[0]}

ACTIONS = {
    "compute": compute,
    "write_rel": lambda: write_file("relative.txt"),
    "write_abs": lambda: write_file(arg),
    "connect": lambda: connect(arg),
    "fork": fork,
    "exec": lambda: os.execv("/bin/sh", ["/bin/sh", "-c", "echo escaped"]),
    "exec_setuid": lambda: os.execv(arg, [arg]),
    "kill": lambda: os.kill(arg, signal.SIGTERM),
    "kill_parent": lambda: os.kill(os.getppid(), 0),
    "kill_self": kill_self,
    "ptrace": lambda: libc.ptrace(16, arg, None, None),  # PTRACE_ATTACH
    "read": lambda: read(arg),
    "listdir": lambda: os.listdir(arg),
    "alloc": alloc,
    "burn": burn,
    "open_many": open_many,
    "setuid0": lambda: os.setuid(0),
    "raise_limit": lambda: resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY,) * 2),
    "fs_mutations": lambda: fs_mutations(arg),
    "thread": thread,
    "import_new": import_new,
    "prctl": lambda: {"nnp": libc.prctl(39, 0, 0, 0, 0), "dumpable": libc.prctl(3, 0, 0, 0, 0),
                      "seccomp": libc.prctl(21, 0, 0, 0, 0)},
}
become = json.loads(sys.argv[5])
if become is not None:  # start as an ordinary user (everything is imported by now)
    from arena.sandbox.jail.seccomp import load_pyseccomp
    load_pyseccomp()  # as a worker does before it can no longer read the (root-only) installation
    os.setgroups([])
    os.setresgid(become, become, become)
    os.setresuid(become, become, become)
report = harden(**opts)
say(layers=report.layers)
say(result=attempt(ACTIONS[action]))
line = sys.stdin.readline()
say(echo=json.loads(line), check=sum(i * i for i in range(1000)))
"""


class Child:
    """The outcome of one hardened child."""

    def __init__(self, proc: subprocess.CompletedProcess[str], elapsed: float) -> None:
        self.returncode = proc.returncode
        self.stderr = proc.stderr
        self.elapsed = elapsed
        self.messages: dict[str, Any] = {}
        self.other: list[str] = []  # lines that are not the harness's JSON (an exec'd program's output)
        for line in proc.stdout.splitlines():
            try:
                self.messages.update(json.loads(line))
            except ValueError:
                self.other.append(line)
        self.layers: dict[str, str] = self.messages.get("layers", {})

    @property
    def result(self) -> Any:
        return self.messages["result"]

    @property
    def alive(self) -> bool:
        """The child survived its attack and still does pipe I/O and computation."""
        return (
            self.returncode == 0
            and self.messages.get("echo") == {"ping": 1}
            and self.messages.get("check") == 332833500
        )

    def need(self, *layers: str) -> None:
        """Skip when a layer is unavailable on this machine; fail when one failed."""
        assert self.layers, f"child reported nothing (rc {self.returncode}): {self.stderr[-2000:]}"
        for name in layers:
            state = self.layers[name]
            if state.startswith("unavailable"):
                pytest.skip(f"layer {name} {state}")
            assert state == "active", f"layer {name} {state}"

    def __repr__(self) -> str:
        return f"Child(rc={self.returncode}, messages={self.messages}, stderr={self.stderr[-1500:]!r})"


def run(
    action: str, arg: Any = None, *, full: bool = True, become: int | None = None, timeout: float = 20, **opts: Any
) -> Child:
    """Run CHILD with harden(**opts); ``full`` adds a fresh uid (when root) and keeps every layer on.

    ``become``: a uid the child switches to before harden(), to act as a worker not started as root.
    """
    if full:
        opts.setdefault("uid", next(_UIDS) if IS_ROOT else None)
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-I", "-c", CHILD, ROOT, json.dumps(opts), action, json.dumps(arg), json.dumps(become)],
        input='{"ping": 1}\n',
        capture_output=True,
        text=True,
        env={},
        cwd="/",
        start_new_session=True,
        timeout=timeout,
        check=False,
    )
    return Child(proc, time.monotonic() - start)


def denied(outcome: dict[str, Any], *errnos: int) -> bool:
    """An attempt that failed with an OSError of one of ``errnos``."""
    return outcome["ok"] is False and outcome["errno"] in errnos


@pytest.fixture
def victim():
    """A bystander process (owned by the test's user) that must survive."""
    proc = subprocess.Popen(["sleep", "60"], start_new_session=True)
    yield proc
    proc.kill()
    proc.wait()


@pytest.fixture
def shared_dir():
    """A world-writable directory (like /tmp) with a file in it."""
    path = tempfile.mkdtemp(prefix="arena-harden-test-")
    os.chmod(path, 0o1777)
    Path(path, "victim.txt").write_text("keep me")
    os.chmod(Path(path, "victim.txt"), 0o666)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def listener():
    """A TCP listener on the host's loopback; yields its port, asserts nobody connected."""
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    srv.setblocking(False)
    yield srv
    srv.close()


def accepted(srv: socket.socket) -> bool:
    try:
        conn, _ = srv.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True


SIGSYS = -signal.SIGSYS


# --- the report and the probe --------------------------------------------------------------------


def test_report_helpers() -> None:
    rep = HardenReport(layers={"workdir": "active", "netns": "unavailable: EPERM", "uid": "failed: x"})
    assert rep.active() == ["workdir"]
    assert rep.missing(["workdir", "netns"]) == ["netns"]
    line = rep.summary()
    assert "\n" not in line and "1/3" in line and "netns unavailable: EPERM" in line
    assert HardenReport.from_dict(json.loads(json.dumps(rep.as_dict()))) == rep
    with pytest.raises(ValueError):
        harden(memory_bytes=0)


def test_probe_reports_every_layer() -> None:
    rep = probe()
    assert list(rep.layers) == list(LAYERS)
    for name, state in rep.layers.items():
        assert state == "active" or state.startswith(("unavailable: ", "failed: ")), (name, state)
    assert not [s for s in rep.layers.values() if s.startswith("failed")], rep.summary()
    assert "\n" not in rep.summary()


# --- still useful after hardening -----------------------------------------------------------------


def test_full_hardening_keeps_computation_and_pipes_working() -> None:
    child = run("compute")
    assert not [s for s in child.layers.values() if s.startswith("failed")], child
    assert child.alive, child
    res = child.result["value"]
    assert res["n"] == 20000 and res["pi"] == 3.142 and "missing" in res["caught"]
    assert res["urandom"] == 8 and res["limits"] <= 8
    assert child.result["ok"] and res["cwd"]["ok"] is False  # the cwd is a removed directory


def test_signals_to_itself_still_work() -> None:
    child = run("kill_self")
    child.need("seccomp")
    assert child.result == {"ok": True, "value": 2} and child.alive, child


def test_worker_not_started_as_root(listener: socket.socket) -> None:
    if not IS_ROOT:
        pytest.skip("this test itself is not root: the other tests cover the unprivileged case")
    child = run("connect", listener.getsockname()[1], full=False, become=next(_UIDS), uid=next(_UIDS))
    assert child.layers["uid"].startswith("unavailable: not running as root"), child
    assert not [s for s in child.layers.values() if s.startswith("failed")], child
    child.need("seccomp")
    assert denied(child.result, 1) and child.alive, child
    assert not accepted(listener)
    child = run("fork", full=False, become=next(_UIDS))
    assert child.returncode == SIGSYS, child


# --- workdir ------------------------------------------------------------------------------------


def test_workdir_is_empty_and_unwritable() -> None:
    child = run("write_rel", full=False, seccomp=False, network=False)
    child.need("workdir")
    assert denied(child.result, 2), child  # ENOENT: the cwd no longer exists
    assert child.alive


def test_given_workdir_is_read_only_after_uid_drop(tmp_path: Path) -> None:
    wd = tmp_path / "wd"
    child = run("write_rel", workdir=str(wd), seccomp=False)
    child.need("workdir", "uid")
    assert denied(child.result, 13), child  # EACCES
    assert not list(wd.iterdir())


# --- rlimits --------------------------------------------------------------------------------------


def test_no_file_data_can_be_written(shared_dir: str) -> None:
    target = os.path.join(shared_dir, "out.txt")
    child = run("write_abs", target, full=False, seccomp=False)
    child.need("rlimits")
    assert child.result["ok"] and denied(child.result["value"]["write"], 27), child  # EFBIG
    assert os.path.getsize(target) == 0 and child.alive


def test_memory_limit() -> None:
    child = run("alloc")
    child.need("rlimits")
    value = child.result["value"]
    assert value["big"]["exc"] == "MemoryError" and value["small"] == 10 * 2**20, child
    assert child.alive


def test_cpu_limit() -> None:
    child = run("burn", cpu_seconds=1)
    child.need("rlimits")
    # SIGXCPU at the soft limit, SIGKILL at the hard one: only RLIMIT_CPU sends these
    # (run() raises on its own wall-clock timeout), so no wall-clock bound is needed.
    assert child.returncode in (-signal.SIGXCPU, -signal.SIGKILL), child


def test_few_file_descriptors() -> None:
    child = run("open_many", full=False, seccomp=False)
    child.need("rlimits")
    assert child.result["value"]["opened"] <= 5 and child.result["value"]["errno"] == 24, child  # EMFILE


def test_no_processes_for_a_dropped_uid() -> None:
    child = run("fork", seccomp=False)
    child.need("rlimits", "uid")
    assert denied(child.result, 11), child  # EAGAIN: RLIMIT_NPROC 0
    assert child.alive


def test_limits_cannot_be_raised_again() -> None:
    child = run("raise_limit", seccomp=False)
    child.need("rlimits", "uid")
    assert child.result["ok"] is False and child.alive, child


# --- netns --------------------------------------------------------------------------------------


def test_host_loopback_unreachable(listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    control = run("connect", port, full=False, network=False, seccomp=False)
    assert control.result["ok"] and control.result["value"]["connect"]["ok"], control  # the test can tell
    assert accepted(listener)
    child = run("connect", port, full=False, seccomp=False)
    child.need("netns")
    assert child.result["ok"] and child.result["value"]["connect"]["ok"] is False, child
    assert not accepted(listener) and child.alive


# --- uid ------------------------------------------------------------------------------------------


def test_uid_drop_protects_other_processes(victim: subprocess.Popen[bytes]) -> None:
    child = run("kill", victim.pid, seccomp=False)
    child.need("uid")
    assert denied(child.result, 1), child  # EPERM
    assert victim.poll() is None and child.alive
    child = run("kill_parent", seccomp=False)
    assert denied(child.result, 1), child
    child = run("read", f"/proc/{os.getpid()}/environ", seccomp=False)
    assert denied(child.result, 13), child  # EACCES
    child = run("setuid0", seccomp=False)
    assert denied(child.result, 1), child


# --- no_new_privs -------------------------------------------------------------------------------


def test_no_new_privs_flags() -> None:
    child = run("prctl", full=False, seccomp=False, network=False)
    child.need("no_new_privs")
    assert child.result["value"] == {"nnp": 1, "dumpable": 0, "seccomp": 0}, child


def test_setuid_binary_grants_nothing() -> None:
    if not IS_ROOT:
        pytest.skip("needs root to make a setuid-root binary")
    ident = shutil.which("id")
    assert ident
    base = tempfile.mkdtemp(prefix="arena-harden-suid-")
    try:
        os.chmod(base, 0o755)
        suid = os.path.join(base, "id")
        shutil.copy(ident, suid)
        os.chmod(suid, 0o4755)
        uid = next(_UIDS)
        control = subprocess.run(  # without no_new_privs the bit works here
            [sys.executable, "-I", "-c", f"import os; os.setresuid({uid}, {uid}, {uid}); os.execv({suid!r}, ['id'])"],
            capture_output=True,
            text=True,
            env={},
            timeout=10,
            check=False,
        )
        if "euid=0" not in control.stdout:
            pytest.skip(f"setuid bits are not honoured here: {control.stdout}{control.stderr}")
        child = run("exec_setuid", suid, uid=uid, seccomp=False)
        child.need("no_new_privs", "uid")
        assert child.returncode == 0 and child.other and f"uid={uid}" in child.other[0], child
        assert "euid=0" not in child.other[0], child
    finally:
        shutil.rmtree(base, ignore_errors=True)


# --- seccomp ------------------------------------------------------------------------------------

KILLED = ["fork", "exec", "kill_parent", "thread"]


@pytest.mark.parametrize("action", KILLED)
def test_seccomp_kills_escape_attempts(action: str) -> None:
    child = run(action)
    child.need("seccomp")
    assert child.returncode == SIGSYS and "result" not in child.messages, child


def test_seccomp_kills_signals_to_others(victim: subprocess.Popen[bytes]) -> None:
    child = run("kill", victim.pid, full=False)  # even as root
    child.need("seccomp")
    assert child.returncode == SIGSYS, child
    assert victim.poll() is None


def test_seccomp_kills_ptrace(victim: subprocess.Popen[bytes]) -> None:
    child = run("ptrace", victim.pid, full=False)
    child.need("seccomp")
    assert child.returncode == SIGSYS, child


def test_seccomp_denies_sockets(listener: socket.socket) -> None:
    child = run("connect", listener.getsockname()[1], full=False, network=False)
    child.need("seccomp")
    assert denied(child.result, 1) and child.alive, child
    assert not accepted(listener)


@pytest.mark.parametrize("what", ["cmdline", "environ"])
def test_seccomp_denies_reading_the_parent(what: str) -> None:
    child = run("read", f"/proc/{os.getpid()}/{what}", full=False)  # even as root
    child.need("seccomp")
    assert denied(child.result, 1) and child.alive, child


def test_seccomp_denies_files(shared_dir: str) -> None:
    child = run("write_abs", os.path.join(shared_dir, "new.txt"), full=False)
    child.need("seccomp")
    assert denied(child.result, 1) and child.alive, child
    assert not os.path.exists(os.path.join(shared_dir, "new.txt"))
    child = run("fs_mutations", shared_dir, full=False)
    assert all(denied(v, 1) for v in child.result["value"].values()) and child.alive, child
    assert sorted(os.listdir(shared_dir)) == ["victim.txt"]
    assert Path(shared_dir, "victim.txt").read_text() == "keep me"
    child = run("listdir", "/", full=False)
    assert denied(child.result, 1) and child.alive, child


def test_seccomp_denies_new_imports_and_limit_changes() -> None:
    child = run("import_new")
    child.need("seccomp")
    assert child.result["exc"] == "ModuleNotFoundError" and child.alive, child
    child = run("raise_limit", full=False)
    assert child.result["ok"] is False and child.alive, child
    child = run("prctl", full=False)
    assert child.result["value"]["seccomp"] == 2, child
