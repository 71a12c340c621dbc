"""The build cache (issue 27, item 3): a build's output kept by the sha256 of its inputs, written
atomically, content-addressed, and read back as untrusted input: anything but the whole, exact
entry of the key asked for is missing, never trusted; and a bot is built once per process."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest
from support.builds import BuildWatch, folder_with_build, marker

from arena.errors import BotLoadError
from arena.sandbox.programs.build import BuildLimits
from arena.sandbox.programs.buildcache import BuildCache, build_key, decode, encode, forbid_builds
from arena.seats.factories import make_factory
from arena.trust.botsource import read_bot_file

FILES = {"bot.toml": b'run = "./bot"\n', "bot": b"\x7fELF\x00 built", "obj/a.o": b"", "src/x.cpp": "é".encode()}
builds_as_root = pytest.mark.skipif(os.geteuid() != 0, reason="builds run sandboxed only as root")


def test_a_builds_key_is_the_sha256_of_its_files_command_and_limits() -> None:
    key = build_key("make", FILES)
    assert len(key) == 64 and key == build_key("make", dict(reversed(FILES.items())))
    others = {
        build_key("make -j2", FILES),
        build_key("make", {**FILES, "bot": b"\x7fELF\x00 other"}),
        build_key("make", FILES, BuildLimits(seconds=60)),
        build_key("make", {k: v for k, v in FILES.items() if k != "obj/a.o"}),
    }
    assert key not in others and len(others) == 4


def test_an_entry_is_content_addressed_and_written_whole(tmp_path: Path) -> None:
    cache = BuildCache(tmp_path / "builds")
    key = build_key("make", FILES)
    digest = cache.save(key, FILES)
    entry = tmp_path / "builds" / "objects" / digest
    assert hashlib.sha256(entry.read_bytes()).hexdigest() == digest
    assert (tmp_path / "builds" / "keys" / key).read_bytes() == digest.encode()
    assert cache.load(key) == FILES and cache.load(key, digest) == FILES
    assert cache.save(key, FILES) == digest  # the same build, the same entry
    left = sorted(p.name for p in (tmp_path / "builds").rglob("*") if p.is_file())
    assert left == sorted([digest, key])  # no temporary file left behind
    assert oct(entry.stat().st_mode & 0o777) == "0o600"


def test_a_damaged_missing_or_foreign_entry_is_never_trusted(tmp_path: Path) -> None:
    # Every way the folder can lie: each is a missing entry (None), so the caller builds again.
    cache = BuildCache(tmp_path / "builds")
    key = build_key("make", FILES)
    digest = cache.save(key, FILES)
    entry = tmp_path / "builds" / "objects" / digest
    whole = entry.read_bytes()

    def load_after(change: bytes | None) -> object:
        entry.unlink(missing_ok=True)
        if change is not None:
            entry.write_bytes(change)
        return cache.load(key, digest)

    flipped = bytearray(whole)
    flipped[-3] ^= 1
    assert load_after(bytes(flipped)) is None  # a byte changed
    assert load_after(whole[:-1]) is None  # cut short
    assert load_after(None) is None  # missing
    assert load_after(whole) == FILES
    # a link in its place, to a file holding the very bytes: not followed
    (tmp_path / "elsewhere").write_bytes(whole)
    entry.unlink()
    entry.symlink_to(tmp_path / "elsewhere")
    assert cache.load(key, digest) is None and cache.load(key) is None
    entry.unlink()
    os.mkfifo(entry)  # a FIFO: refused without blocking
    assert cache.load(key, digest) is None
    entry.unlink()
    entry.write_bytes(whole)
    # another key's entry, put under this key (its digest true to its bytes): refused, it names its own key
    other = build_key("make other", FILES)
    other_digest = cache.save(other, FILES)
    (tmp_path / "builds" / "keys" / key).write_text(other_digest)
    assert cache.load(key) is None and cache.load(key, other_digest) is None
    assert cache.load(key, digest) == FILES  # the database's digest, not the folder's word
    for bad in ("../" + digest[3:], digest.upper(), "", "x" * 64):
        assert cache.load(key, bad) is None


def test_an_entry_is_read_no_further_than_a_build_can_make_it(tmp_path: Path) -> None:
    limits = BuildLimits(folder_bytes=1024, folder_files=4)
    cache = BuildCache(tmp_path / "builds", limits)
    key = build_key("make", FILES, limits)
    huge = encode(key, {"bot": b"x" * 4096})
    digest = hashlib.sha256(huge).hexdigest()
    (tmp_path / "builds" / "objects").mkdir(parents=True)
    (tmp_path / "builds" / "objects" / digest).write_bytes(huge + b"\0" * (1 << 20))
    assert cache.load(key, digest) is None  # past the bound: not read, not hashed
    (tmp_path / "builds" / "objects" / digest).write_bytes(huge)
    assert cache.load(key, digest) is None  # whole, but more than the build's folder could hold
    with pytest.raises(ValueError):
        decode(encode(key, {f"f{i}": b"" for i in range(5)}), key, limits)


@pytest.mark.parametrize(
    "name", ["../host", "/etc/passwd", ".hidden", "a//b", "a/./b", "x\nPROBLEM", "", "a/../../b", "é" * 201]
)
def test_an_entry_naming_a_file_outside_a_plain_relative_path_is_refused(name: str) -> None:
    key = build_key("make", FILES)
    with pytest.raises(ValueError):
        decode(encode(key, {"bot.toml": b"", name: b"x"}), key)


def test_an_entrys_numbers_are_ascii_digits_and_its_bytes_all_accounted_for() -> None:
    key = build_key("make", FILES)
    good = encode(key, {"bot": b"abc"})
    assert decode(good, key) == {"bot": b"abc"}
    for bad in (
        good + b"!",  # trailing bytes
        good.replace(b"\n1\n", b"\n\xd9\xa1\n", 1),  # an Arabic-Indic one
        good.replace(b"\n1\n", b"\n01\n", 1),
        good.replace(b"3 3\n", b"3 -3\n", 1),
        good.replace(b"3 3\n", b"3 9999999999999\n", 1),
    ):
        with pytest.raises(ValueError):
            decode(bad, key)
    assert decode(encode(key, {}), key) == {}


@builds_as_root
def test_a_bot_is_built_once_per_process_however_many_factories_it_gets(tmp_path: Path) -> None:
    # `arena play --workers N` forked N workers that each built the bot again, after the parent had.
    mark = marker()
    src = read_bot_file(folder_with_build(tmp_path, "once", f"sleep 1; : {mark}"))
    with BuildWatch(mark) as watch:
        for _ in range(3):
            make_factory(src).close()
    assert watch.builds == 1


@builds_as_root
def test_a_failed_build_is_kept_too_and_said_to_each_caller(tmp_path: Path) -> None:
    mark = marker()
    src = read_bot_file(
        folder_with_build(tmp_path, "broken", f"sleep 1; : {mark}; echo 'bot.cpp:3: error: no' >&2; exit 2")
    )
    with BuildWatch(mark) as watch:
        for _ in range(2):
            with pytest.raises(BotLoadError, match=r"the build failed \(exited with status 2\): bot.cpp:3: error: no"):
                make_factory(src)
    assert watch.builds == 1


def test_where_builds_are_forbidden_a_bot_not_built_before_is_refused_never_built(tmp_path: Path) -> None:
    # A contest server's loops take builds from its queue's cache; one made there would stall them.
    src = read_bot_file(folder_with_build(tmp_path, "nobuild", "exit 0"))
    with (
        forbid_builds("builds run in the queue"),
        pytest.raises(BotLoadError, match="not built: builds run in the queue"),
    ):
        make_factory(src)


@builds_as_root
def test_a_bot_built_before_is_staged_from_its_built_files_without_a_build(tmp_path: Path) -> None:
    from dataclasses import replace

    src = read_bot_file(folder_with_build(tmp_path, "given", "exit 3"))  # a build that would fail
    built = tuple(sorted({**dict(src.files), "made.txt": b"by the queue"}.items()))
    with forbid_builds("not here"):
        factory = make_factory(replace(src, built=built))
    try:
        assert factory.program["built"] == {"made.txt": hashlib.sha256(b"by the queue").hexdigest()}
    finally:
        factory.close()
    shutil.rmtree(tmp_path / "given")
