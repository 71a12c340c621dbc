"""Builds and process trees (issue 27): nothing of a build outlives it, its output is read
after it is gone and never through a link, and its folder is a bounded filesystem of its own.

Each attack here escaped the sandbox before: a child that left the build's process group lived
on after ``arena check`` returned; such a survivor swapped a folder of the build for a link to a
host folder while the referee read the build's output, and the referee (root) read the host's
files into the bot; a build filled the host's disk before its folder's size was checked.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import threading
import time
import uuid
from pathlib import Path

import pytest

from arena.sandbox.programs.build import BuildLimits, run_build

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="builds run sandboxed only as root"),
    pytest.mark.skipif(shutil.which("python3") is None, reason="the attacks are python3 scripts"),
]

KIT = Path(__file__).resolve().parents[3] / "arena" / "authoring" / "kits" / "python-stdio"


def alive(marker: str) -> list[int]:
    """The pids of live processes whose command line holds ``marker`` (a zombie has none)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(int(entry))
    return found


def reap(marker: str) -> list[int]:
    """Kill what is left of an attack (the old code left it); the pids that were alive."""
    pids = alive(marker)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return pids


#: Leave the build's tree of processes behind, in three ways. The attacker starts a child that
#: tries to leave the process group (or session) the referee used to kill, tells its parent it
#: is done (so the build ends only then, whatever the machine's speed), and sleeps.
LEAVE = {
    "setpgid": "os.setpgid(0, 0)",
    "setsid": "os.setsid()",
}
ESCAPE = """\
import os, sys, time
r, w = os.pipe()
if os.fork() == 0:
    os.close(r)
    if sys.argv[2] == "double-fork" and os.fork() != 0:
        os._exit(0)  # the middle process ends: the grandchild is an orphan
    try:
        {leave}
    except OSError:
        pass
    os.write(w, b"out")
    os.close(w)
    time.sleep(120)
    os._exit(0)
os.close(w)
os.read(r, 3)
"""


def folder_with_build(tmp_path: Path, build: str, **extra: str) -> Path:
    bot = tmp_path / "kit"
    shutil.copytree(KIT, bot)
    toml = (bot / "bot.toml").read_text(encoding="utf-8")
    (bot / "bot.toml").write_text(toml + f"build = {build!r}\n", encoding="utf-8")
    for name, text in extra.items():
        (bot / name).write_text(text, encoding="utf-8")
    return bot


@pytest.mark.parametrize(("how", "leave"), [("setpgid", "setpgid"), ("double-fork", "setpgid"), ("setsid", "setsid")])
def test_arena_check_returns_with_no_process_of_the_builds_alive(
    how: str, leave: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A build's child in a new process group, an orphan of a double fork, a child in a new
    session: each lived on after ``arena check`` returned clean (its uid, a writable folder, 2
    GiB x 64 processes). The build is now the first process of its own PID namespace: its end
    ends them all, before its output is read."""
    from arena.cli import main

    marker = f"arena-survivor-{uuid.uuid4().hex}"
    bot = folder_with_build(
        tmp_path, f"python3 escape.py {marker} {how}", **{"escape.py": ESCAPE.format(leave=LEAVE[leave])}
    )
    try:
        assert main(["check", str(bot), "--games", "1"]) == 0, capsys.readouterr().err
        survivors = alive(marker)
    finally:
        reap(marker)
    assert survivors == [], f"processes of the build outlived arena check: {survivors}"


SWAPPER = """\
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
r, w = os.pipe()
if os.fork() == 0:
    try:
        os.setpgid(0, 0)  # out of the group the referee killed (refused now)
    except OSError:
        pass
    os.write(w, b"go")
    while True:  # d (a folder) <-> l (a link to the host's folder), for ever
        libc.syscall(316, AT_FDCWD, b"d", AT_FDCWD, b"l", RENAME_EXCHANGE)
os.read(r, 2)
"""


def test_a_survivor_swapping_a_folder_for_a_link_reads_nothing_of_the_host(tmp_path: Path) -> None:
    """The red team's critical attack: the collector checked the built folder for links, then
    opened each file by its path as root; a survivor swapped a folder of the build for a link to
    a host folder (renameat2 RENAME_EXCHANGE) between the check and the open, and the host's
    files came back as the bot's. Now nothing of the build runs while its folder is read, and
    every file is opened beneath its folder's descriptor with no link followed."""
    host = tmp_path / "host"
    host.mkdir()
    names = [f"x{i:03d}" for i in range(300)]
    secret = f"HOST-SECRET-{uuid.uuid4().hex}"
    for name in names:
        (host / name).write_text(secret, encoding="utf-8")
    build = f"mkdir d && for n in {' '.join(names)}; do echo decoy > d/$n; done && ln -s {host} l && python3 swap.py"
    files = {"bot.toml": b"", "swap.py": SWAPPER.encode()}
    markers = []
    try:
        for _ in range(3):
            markers.append(f"arena-swapper-{uuid.uuid4().hex}")
            built = run_build(f"{build} {markers[-1]}", files, "t", BuildLimits(seconds=60))
            leaked = [rel for rel, data in built.items() if secret.encode() in data]
            assert leaked == [], f"the build's output holds host files: {leaked[:5]}"
            assert sum(data == b"decoy\n" for data in built.values()) == len(names)  # the folder, read whole
    finally:
        for marker in markers:
            reap(marker)


def test_a_build_that_writes_300_mib_fails_in_one_line_and_the_host_disk_does_not_grow(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A build wrote 300 MiB into a host folder before the folder's 64 MiB bound was checked.
    Now its folder is a tmpfs of that size in its own mount namespace: the writes fail there, the
    build fails in one line saying so, and the host's disk never holds them."""
    from arena.cli import main

    chunk = 60 * 2**20  # under RLIMIT_FSIZE (64 MiB a file): five files make 300 MiB
    build = f"for i in 1 2 3 4 5; do head -c {chunk} /dev/zero > f$i || exit 1; done; sleep 1"
    bot = folder_with_build(tmp_path, build)
    where = tempfile.gettempdir()

    def free() -> int:
        info = os.statvfs(where)
        return info.f_bavail * info.f_frsize

    before = free()
    lowest = [before]
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            lowest[0] = min(lowest[0], free())
            done.wait(0.01)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        code = main(["check", str(bot), "--games", "1"])
    finally:
        done.set()
        watcher.join()
    problems = [line for line in capsys.readouterr().out.splitlines() if "PROBLEM" in line]
    assert code == 1 and len(problems) == 1 and "the build filled its folder (at most 64 MiB" in problems[0], problems
    bound = 2 * BuildLimits().folder_bytes  # its folder and its /tmp, at most
    assert before - lowest[0] < bound, f"the host's disk lost {(before - lowest[0]) >> 20} MiB during the build"


def test_a_build_may_neither_make_a_process_group_nor_signal_outside_its_tree(tmp_path: Path) -> None:
    """The build filter refuses setpgid and setsid (a build needs neither; they were the way out
    of the group its referee killed), clones that make namespaces (a user namespace is root's
    powers over new namespaces), and a build sees no process but its own: a pid outside its
    tree does not exist for it (its PID namespace)."""
    outside = os.getpid()  # root's: a signal is refused (EPERM) when it is seen, ESRCH when not
    probe = f"""\
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
def err(call):
    try:
        call()
        return "ok"
    except OSError as exc:
        return errno.errorcode[exc.errno]
pid = libc.syscall(56, 0x10000000 | 17, 0, 0, 0, 0)  # clone(CLONE_NEWUSER | SIGCHLD)
if pid == 0:
    os._exit(0)
clone = "ok" if pid > 0 else errno.errorcode[ctypes.get_errno()]
print(err(lambda: os.setpgid(0, 0)), err(os.setsid), err(lambda: os.kill({outside}, 0)), clone, os.getpid())
"""
    built = run_build("python3 probe.py > out.txt", {"bot.toml": b"", "probe.py": probe.encode()}, "t")
    setpgid, setsid, kill, clone, pid = built["out.txt"].decode().split()
    assert (setpgid, setsid, kill, clone) == ("EPERM", "EPERM", "ESRCH", "EPERM"), built["out.txt"]
    assert int(pid) < 64  # numbered in its own namespace, from 1


def test_a_program_is_pid_1_of_its_namespace_and_signalled_through_its_pidfd() -> None:
    """A program runs as the first process of its own PID namespace, and the referee holds a
    pidfd of it (opened by the launcher, its parent, before it could be reaped): every signal
    goes through it, so none can reach a process that reused its pid. The kernel's own account
    of the pidfd names the program, pid 1 inside."""
    from arena.sandbox import Limits
    from arena.sandbox.programs.process import ProgramProcess, Runtime

    stage = tempfile.mkdtemp(prefix="arena-pidns-test-")
    os.chmod(stage, 0o555)
    try:
        proc = ProgramProcess(stage, Runtime("program", ("/bin/sleep", "60")), Limits())
        try:
            assert proc.report["pidns"] == "active" and proc.pidfd is not None
            info = dict(line.split(":", 1) for line in Path(f"/proc/self/fdinfo/{proc.pidfd}").read_text().splitlines())
            assert int(info["Pid"]) == proc.pid != proc.proc.pid  # the program, not its launcher
            assert info["NSpid"].split() == [str(proc.pid), "1"]
            proc.stop()  # SIGSTOP through the pidfd (delivered as the program next runs)
            for _ in range(500):
                state = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
                if state == "T":
                    break
                time.sleep(0.01)
            assert state == "T"
        finally:
            proc.kill()
        assert (
            int(
                dict(line.split(":", 1) for line in Path(f"/proc/self/fdinfo/{proc.pidfd}").read_text().splitlines())[
                    "Pid"
                ]
            )
            == -1
        )
    finally:
        os.chmod(stage, 0o700)
        shutil.rmtree(stage)


#: Four processes of 150 MiB each, every page touched: each under a 320 MiB per-process limit.
HOGS = """\
import os, sys, time
pids = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        hog = bytearray(150 * 2**20)
        for i in range(0, len(hog), 4096):
            hog[i] = 1
        time.sleep(2)
        os._exit(0)
    pids.append(pid)
sys.exit(max(os.waitpid(p, 0)[1] for p in pids) and 1)
"""


def test_a_builds_processes_share_one_memory_bound() -> None:
    """RLIMIT_AS bounds one process: five processes of 1.8 GiB held 9 GiB under a 2 GiB limit (an
    independent attack; 64 of them would take 128 GiB and the host's memory with it). Now the
    whole build is one memory group of that limit: the build fails in one line, saying so."""
    from arena.errors import BotLoadError
    from arena.sandbox.jail import memgroup

    group = memgroup.make(2**20)
    if group is None:
        pytest.skip("this host lets no process make a memory group (the build runs with per-process limits)")
    group.close()
    limits = BuildLimits(seconds=60, memory_bytes=320 * 2**20)
    with pytest.raises(BotLoadError, match="ran out of memory"):
        run_build("python3 hogs.py", {"bot.toml": b"", "hogs.py": HOGS.encode()}, "t", limits)
    alone = BuildLimits(seconds=60, memory_bytes=1024 * 2**20)  # the same hogs under a bound that holds them
    run_build("python3 hogs.py", {"bot.toml": b"", "hogs.py": HOGS.encode()}, "t", alone)


def test_a_killed_referees_memory_group_is_swept_by_the_next_build() -> None:
    """A referee killed mid-build (kill -9) left its build's empty memory group behind for ever (a
    second independent attack); the next build removes the groups of referees that are gone."""
    from arena.sandbox.jail import memgroup

    group = memgroup.make(2**20)
    if group is None:
        pytest.skip("this host lets no process make a memory group")
    group.close()
    parent = os.path.dirname(group.path)
    dead = 4_000_000  # above the kernel's largest pid: no such process
    stale = os.path.join(parent, f"build-{dead}-0badc0de")
    os.mkdir(stale)
    mine = os.path.join(parent, f"build-{os.getpid()}-00000000")  # a live referee's: kept
    os.mkdir(mine)
    try:
        fresh = memgroup.make(2**20)
        assert fresh is not None
        fresh.close()
        assert not os.path.exists(stale) and os.path.exists(mine)
    finally:
        for path in (stale, mine):
            if os.path.exists(path):
                os.rmdir(path)
