"""Submissions folders and bot files are untrusted input (issue 17, item 6): every reader of a
contestant-controlled path goes through :func:`arena.trust.files.read_untrusted`, which takes a
regular file (of its own, in a submissions folder) or refuses in one line naming the path; a
symbolic link never plays unverified, and a FIFO or device never blocks a command."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.cli import run

import arena.trust.files as untrusted
from arena.authoring.submissions import scan
from arena.errors import BotLoadError
from arena.trust.botsource import read_bot_file
from arena.trust.files import NotRegularFile, read_untrusted

ROOT = Path(__file__).resolve().parents[2]
GREEDY = (ROOT / "bots" / "greedy.py").read_text()


def bot_text(name: str) -> str:
    return GREEDY.replace('name = "greedy"', f'name = "{name}"')


def promptly(fifos: list[Path], call: Callable[[], object], seconds: float = 30.0) -> object:
    """``call()``, which must return within ``seconds`` although ``fifos`` have no writer; if it
    blocks on one, the test fails (and the FIFOs are opened for writing, so the reader gets
    end-of-file and the thread ends)."""
    box: list[object] = []
    error: list[BaseException] = []

    def target() -> None:
        try:
            box.append(call())
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            error.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        for fifo in fifos:
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(10)
        pytest.fail(f"blocked on a FIFO for {seconds} s")
    if error:
        raise error[0]
    return box[0]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A submissions folder: ann.py with a manifest that names it and its sha256."""
    subs = tmp_path / "subs"
    subs.mkdir()
    write_submission(subs, "ann")
    return subs


def write_submission(subs: Path, name: str) -> Path:
    data = bot_text(name).encode()
    (subs / f"{name}.py").write_bytes(data)
    manifest = {"name": name, "file": f"{name}.py", "sha256": hashlib.sha256(data).hexdigest(), "author": "A"}
    (subs / f"{name}.json").write_text(json.dumps(manifest))
    return subs / f"{name}.py"


def hostile(kind: str, at: Path, tmp_path: Path) -> Path:
    """Put at ``at`` one thing that is not a regular file of its own."""
    if kind == "symlink to a file":
        outside = tmp_path / "unchecked.py"
        outside.write_text(bot_text(at.stem))
        at.symlink_to(outside)
    elif kind == "symlink to /dev/zero":
        at.symlink_to("/dev/zero")
    elif kind == "symlink to /dev/null":
        at.symlink_to("/dev/null")
    elif kind == "fifo":
        os.mkfifo(at)
    elif kind == "folder":
        at.mkdir()
    elif kind == "hard link":
        other = tmp_path / "elsewhere.py"
        other.write_text(bot_text(at.stem))
        os.link(other, at)
    elif kind == "device":
        try:
            os.mknod(at, 0o600 | 0o020000, os.makedev(1, 3))  # a character device like /dev/null
        except (PermissionError, OSError) as exc:
            pytest.skip(f"mknod not allowed here: {exc}")
    else:
        raise AssertionError(kind)
    return at


KINDS = {
    "symlink to a file": "a symbolic link",
    "symlink to /dev/zero": "a symbolic link",
    "symlink to /dev/null": "a symbolic link",
    "fifo": "a FIFO",
    "folder": "a folder",
    "hard link": "a hard link",
    "device": "a character device",
}


# -- the one reader --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_the_reader_refuses_everything_but_a_regular_file(kind: str, tmp_path: Path) -> None:
    path = hostile(kind, tmp_path / "bot.py", tmp_path)
    with pytest.raises(NotRegularFile) as caught:
        promptly([path], lambda: read_untrusted(path, 1000, single_link=True))
    assert str(caught.value) == f"{path}: {caught.value.reason}" and caught.value.reason.startswith(KINDS[kind])
    assert "not a regular file" in caught.value.reason
    if kind != "hard link":  # a hard link is refused only inside a submissions folder
        with pytest.raises(BotLoadError, match=KINDS[kind]):
            promptly([path], lambda: read_bot_file(path, lenient=True))
    else:
        assert read_bot_file(path).name == "bot"


def test_a_unix_socket_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.py"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))
        with pytest.raises(NotRegularFile, match="a socket, not a regular file"):
            read_untrusted(path, 1000)


def test_the_reader_reads_at_most_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "big.py"
    with open(path, "wb") as f:
        f.truncate(1 << 30)  # sparse
    got = read_untrusted(path, 4096)
    assert len(got.data) == 4097 and got.size == 1 << 30 and got.too_large
    small = tmp_path / "small.py"
    small.write_bytes(b"x" * 4096)
    got = read_untrusted(small, 4096)
    assert got.data == b"x" * 4096 and not got.too_large


@contextlib.contextmanager
def swapped_after_lstat(path: Path, swap: Callable[[], None]) -> Iterator[None]:
    """Run ``swap`` between the reader's lstat and its open (the race an attacker would win)."""
    real_open = os.open

    def open_after_swap(p: object, flags: int, *args: object) -> int:
        if Path(str(p)) == path:
            swap()
        return real_open(p, flags, *args)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(untrusted.os, "open", open_after_swap)
        yield


@pytest.mark.parametrize("swap_in", ["another file", "symlink", "fifo"])
def test_a_path_swapped_between_the_check_and_the_read_is_refused(swap_in: str, tmp_path: Path) -> None:
    path = tmp_path / "bot.py"
    path.write_text(bot_text("honest"))
    evil = tmp_path / "evil.py"
    evil.write_text("import os\n")

    def swap() -> None:
        path.unlink()
        if swap_in == "another file":
            os.rename(evil, path)
        elif swap_in == "symlink":
            path.symlink_to(evil)
        else:
            os.mkfifo(path)

    with swapped_after_lstat(path, swap), pytest.raises(NotRegularFile) as caught:
        promptly([path], lambda: read_untrusted(path, 1000))
    expected = {"another file": "replaced by another file", "symlink": "a symbolic link", "fifo": "a FIFO"}[swap_in]
    assert caught.value.reason.startswith(expected)


# -- the commands ----------------------------------------------------------------------------


def one_line(code: int, out: str, err: str, *needles: str, status: int = 2) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == status and len(lines) == 1 and "Traceback" not in err + out, (code, err)
    assert all(n in lines[0] for n in needles), lines[0]
    return lines[0]


@pytest.mark.parametrize("kind", ["symlink to a file", "fifo", "folder", "symlink to /dev/zero"])
def test_play_check_and_submit_refuse_a_bot_file_that_is_not_regular(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = hostile(kind, tmp_path / "bot.py", tmp_path)
    why = KINDS[kind]
    for argv in (
        ("play", str(path), "greedy", "-n", "1", "-q"),
        ("check", str(path)),
        ("submit", str(path), "--to", str(tmp_path / "subs")),
    ):
        got = promptly([path], lambda argv=argv: run(capsys, *argv))
        one_line(*got, f"{path}: {why}")  # type: ignore[misc]
    assert not (tmp_path / "subs").exists()


@pytest.mark.parametrize("kind", ["symlink to a file", "fifo", "folder", "symlink to /dev/null", "hard link"])
@pytest.mark.parametrize("what", ["bot file", "manifest"])
def test_a_tournament_refuses_a_submissions_folder_entry_that_is_not_regular(
    kind: str, what: str, folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The attack: a link to an unchecked file (or a FIFO, a device...) beside a verified bot,
    # as the bot file or as its manifest. A plain copy of it is refused as unverified already.
    if what == "bot file":
        path = hostile(kind, folder / "mallory.py", tmp_path)
    else:
        (folder / "mallory.py").write_text(bot_text("mallory"))
        path = hostile(kind, folder / "mallory.json", tmp_path)
    db = tmp_path / "t.sqlite"
    for spec in (str(folder), str(folder / "mallory.py")):
        argv = ("tournament", spec, "greedy", "--db", str(db), "-n", "1", "--allow-unverified", "-q")
        got = promptly([path], lambda argv=argv: run(capsys, *argv))
        one_line(*got, f"{path}: {KINDS[kind]}")  # type: ignore[misc]
    assert not db.exists()


def test_a_hard_link_plays_outside_a_submissions_folder(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (tmp_path / "a.py").write_text(bot_text("a"))
    os.link(tmp_path / "a.py", folder / "a.py")
    assert not scan(folder).submissions
    from arena.tournament.runner import collect

    assert [s.name for s in collect([str(folder)])] == ["a"]


@pytest.mark.parametrize("kind", ["fifo", "symlink to a file", "folder"])
@pytest.mark.parametrize("where", ["stored bot", "manifest", "another bot"])
def test_submit_refuses_a_target_folder_entry_that_is_not_regular(
    kind: str, where: str, folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `arena submit` reads what is in the folder (the bot it replaces, its manifest, the other
    # bots to find a duplicate): nothing there may block it or be written through.
    bot = tmp_path / "bo.py"
    bot.write_text(bot_text("bo"))
    if where == "stored bot":
        (folder / "bo.json").write_text("{}")
        path = hostile(kind, folder / "bo.py", tmp_path)
    elif where == "manifest":
        (folder / "bo.py").write_text(bot_text("bo") + "# an older version\n")
        path = hostile(kind, folder / "bo.json", tmp_path)
    else:
        path = hostile(kind, folder / "zed.py", tmp_path)
    before = sorted(p.name for p in folder.iterdir())
    argv = ("submit", str(bot), "--to", str(folder), "--games", "1", "--replace")
    code, out, err = promptly([path], lambda: run(capsys, *argv))  # type: ignore[misc]
    if where == "another bot":  # not a submission: skipped by the duplicate search, never read
        assert code == 0, err
        assert (folder / "bo.py").read_text() == bot_text("bo")
        return
    one_line(code, out, err, f"{path}: {KINDS[kind]}", status=1)
    assert sorted(p.name for p in folder.iterdir()) == before  # nothing written, no temporary file


def test_submit_writes_through_no_link_planted_at_its_temporary_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from arena.authoring import submissions

    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    target = tmp_path / "out" / "x.py"
    target.parent.mkdir()
    for pid in range(os.getpid() - 2, os.getpid() + 3):  # the old, guessable temporary names
        (target.parent / f".x.py.{pid}.tmp").symlink_to(victim)
    submissions.write_atomic(target, b"new")
    assert victim.read_text() == "precious" and target.read_bytes() == b"new"


def test_report_never_opens_a_manifest_beside_a_stored_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The database names each bot file's path, but a path from the database is never opened
    # (docs/security/files.md, "Databases are untrusted input"): a FIFO where the manifest would be
    # neither blocks the report nor stops it.
    entries = tmp_path / "entries"
    entries.mkdir()
    for name in ("a", "b"):
        (entries / f"{name}.py").write_text(bot_text(name))
    db = tmp_path / "t.sqlite"
    code, out, err = run(capsys, "tournament", str(entries), "--trusted", "--db", str(db), "-n", "1", "-q")
    assert code == 0, err
    fifo = entries / "a.json"
    os.mkfifo(fifo)
    code, out, err = promptly([fifo], lambda: run(capsys, "report", "--db", str(db), "--out", str(tmp_path / "site")))  # type: ignore[misc]
    assert code == 0, err
    assert (tmp_path / "site" / "index.html").is_file()


# -- folders: read beneath a descriptor ----------------------------------------------------------

SWAPPER = """\
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
print("ready", flush=True)
while True:  # renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
    libc.syscall(316, -100, a, -100, b, 2)
"""


def test_a_bot_folders_subfolder_swapped_for_a_link_never_reads_the_host(tmp_path: Path) -> None:
    """A bot folder was read by path: a subfolder checked to be a folder, then listed and its
    files opened by paths through it. Swapped for a link to a host folder in between (by
    anyone who can write the submissions folder), it read the host's files as the bot's. Now
    each entry is opened beneath the descriptor of the folder that lists it, never following a
    link: the read gets the bot's files or a refusal, never the host's."""
    import subprocess
    import sys

    from arena.trust.botfolder import read_bot_folder

    bot, host, outside = tmp_path / "bot", tmp_path / "host", tmp_path / "outside"
    for folder in (bot / "d", host, outside):
        folder.mkdir(parents=True)
    (bot / "bot.toml").write_text('language = "x"\nrun = "./x"\n')
    secret = "HOST-SECRET"
    for i in range(40):
        (bot / "d" / f"x{i:02d}").write_text("decoy")
        (host / f"x{i:02d}").write_text(secret)
    (outside / "l").symlink_to(host)
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(bot / "d"), str(outside / "l")], stdout=subprocess.PIPE, text=True
    )
    leaks = reads = 0
    try:
        assert swapper.stdout is not None and swapper.stdout.readline().strip() == "ready"
        for _ in range(300):
            try:
                _, _, _, files = read_bot_folder(bot)
            except BotLoadError as exc:
                assert "symbolic link" in exc.message or "replaced" in exc.message, exc.message
                continue
            reads += 1
            leaks += sum(secret.encode() in data for _, data in files)
    finally:
        swapper.kill()
        swapper.wait()
    assert leaks == 0, f"{leaks} host files read as the bot's"
    assert reads > 0  # the race was run: some reads found the folder in place


def test_a_replays_folder_whose_marker_is_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    """The replays folder's marker was read with a plain open: a FIFO there blocked the
    tournament for ever, a link read any file. It is read as untrusted input now."""
    from arena.tournament.db.replays import MARKER, RecordsFolderError, check

    folder = tmp_path / "replays"
    folder.mkdir()
    os.mkfifo(folder / MARKER)
    with pytest.raises(RecordsFolderError, match="did not write"):
        promptly([folder / MARKER], lambda: check(folder, tmp_path / "t.db"))


def test_a_bot_folders_files_come_in_the_order_its_stored_bundle_keeps(tmp_path: Path) -> None:
    """A folder ``a`` beside a file ``a.txt`` was read ``a/x`` first (a walk), but a stored
    bundle's names must be sorted (``a.txt`` < ``a/x``): such a bot could be submitted and then
    never read back from its database. The folder's files now come sorted by their path."""
    from arena.trust.botfolder import bundle, read_bot_folder, unbundle

    bot = tmp_path / "bot"
    (bot / "a").mkdir(parents=True)
    (bot / "bot.toml").write_text('language = "x"\nrun = "./x"\n')
    (bot / "a" / "x").write_text("1")
    (bot / "a.txt").write_text("2")
    _, _, _, files = read_bot_folder(bot)
    assert [name for name, _ in files] == ["a.txt", "a/x", "bot.toml"]
    assert unbundle(bundle("program", files), "t") == ("program", files)
