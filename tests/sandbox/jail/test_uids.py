"""Uids are leased, never derived from a pid, never reused while anything holds them (issue 27).

A uid was ``100000 + pid``: once pids wrapped, a process that outlived its supervision shared
its uid with a later bot (signals, /proc, its RLIMIT_NPROC). Now each is leased from
``arena.sandbox.jail.uids`` (an flock'ed file per uid in a root-only folder), across independent
processes, and held until every process of the uid is gone.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from arena.sandbox.jail import uids
from arena.sandbox.jail.uids import UID_BASE, UID_COUNT, allocate

ROOT = Path(__file__).resolve().parents[3]
#: The old derivation: ``100000 + pid``.
OLD_BASE = 100000
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="uids are dropped only as root")


def uid_of(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    raise AssertionError(f"no Uid line for {pid}")


def processes_of(uid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if uid_of(int(entry)) == uid:
                    found.append(int(entry))
            except (OSError, AssertionError):
                continue
    return found


def held(uid: int, folder: str = uids.LOCKS) -> bool:
    """Whether some process holds ``uid``'s lease (its lock cannot be taken)."""
    try:
        fd = os.open(os.path.join(folder, str(uid)), os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def dropped(pid: int) -> int:
    """The uid of a game process once it has taken its layers (it forks as root)."""
    for _ in range(1000):
        uid = uid_of(pid)
        if uid != 0:
            return uid
        time.sleep(0.01)
    raise AssertionError(f"process {pid} never dropped its uid")


CHILD = """\
import sys
sys.path.insert(0, sys.argv[1])
from arena.sandbox.jail.uids import allocate
lease = allocate(sys.argv[2], int(sys.argv[3]), 2)
print(lease.uid, flush=True)
sys.stdin.read()
"""


@root_only
def test_a_leased_uid_is_never_given_again_while_any_process_holds_it(tmp_path: Path) -> None:
    """Two uids to share: this process leases one, an independent process (a second referee)
    the other; then none is left for anybody. A lease outlives its lessee's copy in a process
    that inherited it, and returns to the pool when the last holder exits."""
    folder, base = str(tmp_path / "locks"), 7_000_000
    mine = allocate(folder, base, 2)
    other = subprocess.Popen(
        [sys.executable, "-I", "-c", CHILD, str(ROOT), folder, str(base)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert other.stdout is not None and other.stdin is not None
        theirs = int(other.stdout.readline())
        assert {mine.uid, theirs} == {base, base + 1}
        with pytest.raises(OSError, match="in use"):
            allocate(folder, base, 2)
        # a process that inherited this lease keeps it after this process lets go of it
        keeper = subprocess.Popen(["sleep", "60"], pass_fds=(mine.fd,))
        first = mine.uid
        mine.close()
        with pytest.raises(OSError, match="in use"):
            allocate(folder, base, 2)
        keeper.kill()
        keeper.wait()
        again = allocate(folder, base, 2)
        assert again.uid == first
        other.stdin.close()
        other.wait()
        last = allocate(folder, base, 2)
        assert last.uid == theirs
        again.close()
        last.close()
    finally:
        other.kill()
        other.wait()


def test_the_lock_folder_must_be_roots_own(tmp_path: Path) -> None:
    """A folder anyone else could write would let them take or fake leases: refused."""
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o777)
    loose.chmod(0o777)
    with pytest.raises(PermissionError, match="mode 0700"):
        allocate(str(loose), 7_100_000, 2)


@root_only
@pytest.mark.skipif(shutil.which("sleep") is None, reason="needs sleep")
def test_a_programs_uid_is_leased_and_held_until_its_last_process_is_gone() -> None:
    """A program's uid is leased, not its launcher's pid plus a base; two live programs hold two
    uids; the lease is held while the program lives and free once nothing runs under it."""
    from arena.sandbox import Limits
    from arena.sandbox.programs.process import ProgramProcess, Runtime

    stage = tempfile.mkdtemp(prefix="arena-uid-test-")
    os.chmod(stage, 0o555)
    procs = []
    try:
        for _ in range(2):
            procs.append(ProgramProcess(stage, Runtime("program", ("/bin/sleep", "60")), Limits()))
        seen = [uid_of(p.pid) for p in procs]
        assert len(set(seen)) == 2 and all(UID_BASE <= u < UID_BASE + UID_COUNT for u in seen), seen
        for proc, uid in zip(procs, seen, strict=True):
            assert uid not in (OLD_BASE + proc.pid, OLD_BASE + proc.proc.pid)  # not derived from a pid
            assert held(uid)
        for proc, uid in zip(procs, seen, strict=True):
            proc.kill()
            assert processes_of(uid) == [] and not held(uid)
    finally:
        for proc in procs:
            proc.kill()
        os.chmod(stage, 0o700)
        shutil.rmtree(stage)


@root_only
def test_a_game_processs_uid_is_leased_by_its_template_until_it_is_reaped() -> None:
    """A Python bot's game process runs under a uid its template leased before the fork; the
    template holds it until it reaps the process (when the referee says so)."""
    from arena.sandbox import Limits
    from arena.sandbox.python.process import Template
    from arena.trust.botsource import read_bot_file

    template = Template(read_bot_file(ROOT / "examples" / "counter.py"), Limits())
    try:
        first = template.spawn()
        uid = dropped(first.pid)
        assert UID_BASE <= uid < UID_BASE + UID_COUNT and uid != OLD_BASE + first.pid
        assert held(uid)
        first.kill()
        for _ in range(500):  # each fork lets the template reap what the referee killed before it
            second = template.spawn()
            assert dropped(second.pid) != uid
            second.kill()
            if not held(uid):
                break
            time.sleep(0.01)
        assert not held(uid) and processes_of(uid) == []  # let go only once the process is gone
    finally:
        template.kill()


@root_only
def test_a_build_runs_under_a_leased_uid(monkeypatch: pytest.MonkeyPatch) -> None:
    """Builds take their uid from the same allocator, held until the build's launcher is reaped."""
    from arena.sandbox.programs import build as progbuild

    leases: list[uids.UidLease] = []

    def lease() -> uids.UidLease:
        leases.append(allocate())
        return leases[-1]

    monkeypatch.setattr(progbuild, "lease_uid", lease)
    built = progbuild.run_build("id -u > uid.txt", {"bot.toml": b""}, "t")
    assert len(leases) == 1 and int(built["uid.txt"]) == leases[0].uid
    assert leases[0].fd == -1 and not held(leases[0].uid)  # let go once the build is over
