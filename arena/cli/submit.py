"""``arena submit``: check a bot and store exactly the checked bytes with a manifest.

The file is read once; the bytes checked are the bytes hashed and stored, so a
file swapped during the check cannot land under the clean file's manifest.
The organiser's side (verifying a submissions folder) is :mod:`arena.authoring.submissions`.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..authoring.check import NAME_PATTERN, RESERVED_NAMES, failure_line, failure_reasons, run_check
from ..authoring.submissions import file_sha256, read_manifest, submitted, write_atomic
from ..errors import BotLoadError, UsageError
from ..trust.files import NotRegularFile, regular
from ..trust.text import escape, to_json
from .check import add_check_options, check_settings

if TYPE_CHECKING:
    from ..trust.botsource import BotSource


def run(args: argparse.Namespace) -> int:
    """Check a bot and store it with its manifest. The file is read once: the bytes checked
    are the bytes hashed and stored, whatever happens to the file meanwhile."""
    from ..trust.botsource import bot_source, read_bot_bytes, read_bot_file

    if (args.to is None) == (args.server is None):
        raise UsageError("give --to DIR (a submissions folder) or --server URL (a contest server), one of them")
    path = Path(args.bot)
    from ..trust.botfolder import is_bot_folder

    is_folder = is_bot_folder(path)  # a bot program's folder (bot.toml)
    if not is_folder:
        try:
            regular(path)
        except NotRegularFile as exc:
            raise UsageError(str(exc)) from None
        except FileNotFoundError:
            raise UsageError(f"{path}: no such file") from None
        except OSError as exc:
            raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if args.server is not None:
        from .upload import upload

        try:  # a program (.js, or a folder with a bot.toml) as its bundle, as a tournament stores it
            if is_folder or path.suffix == ".js":
                program = read_bot_file(path)
                return upload(args, path, program.source.encode("utf-8"), program.name)
            upload_data = read_bot_bytes(path)
        except BotLoadError as exc:
            return refuse(str(exc))
        return upload(args, path, upload_data)
    folder = Path(args.to)
    if os.path.lexists(folder) and not folder.is_dir():
        raise UsageError(f"{folder}: not a folder")
    checked: bytes | None = None
    src: BotSource | None = None
    files: dict[str, bytes] = {}
    try:
        if is_folder:  # read once: the files checked are the files hashed and stored
            src = read_bot_file(path)
            files = dict(src.files)
        else:
            checked = read_bot_bytes(path)
    except BotLoadError as exc:
        return refuse(f"the check failed: {exc}")
    if checked is not None:
        try:
            src = bot_source(checked, path)
        except BotLoadError:
            src = None
    name = src.name if src else path.stem
    if not NAME_PATTERN.fullmatch(name) or name.lower() in RESERVED_NAMES:
        raise UsageError(
            f"bot name {name!r} cannot name a submission: set Bot.name to letters, digits, - or _ "
            "(starting with a letter)"
        )
    # the bot's sha256 as a tournament computes it: a program's is its bundle's (runtime and files)
    sha = src.sha256 if src is not None else hashlib.sha256(checked or b"").hexdigest()
    suffix = "" if is_folder else ".js" if path.suffix == ".js" else ".py"
    stored = folder / f"{name}{suffix}"
    manifest = folder / f"{name}.json"
    previous: str | None = None
    author: str | None = args.author
    if folder.is_dir():
        same = submitted(folder).get(sha)
        if same is not None:
            return refuse(f"{same} is this very file (sha256 {sha[:12]}); it was submitted already")
        try:  # what is there already is the folder's (untrusted) content: regular files or a refusal
            previous = stored_sha256(stored) if os.path.lexists(stored) else None
            old = read_manifest(manifest) if os.path.lexists(manifest) else None
        except NotRegularFile as exc:
            return refuse(f"{exc}; move it away first")
        except OSError as exc:
            return refuse(f"{stored}: cannot read: {exc.strerror or exc}")
        if previous is not None and not args.replace:
            return refuse(
                f"{stored} holds a different bot named {name!r}; rename your bot (Bot.name) "
                "or use --replace to submit a new version"
            )
        if os.path.lexists(manifest) and (previous is None or old is None or old.file != stored.name):
            # not ours to overwrite, --replace or not
            return refuse(f"{manifest} exists but is not the manifest of a submitted bot; move it away first")
        if previous is not None and author is None and old is not None:
            author = old.author  # a new version without --author is still its author's

    given = {"src": src} if is_folder else {}  # a folder: the files read above, checked as they are
    report = run_check(args.bot, check_settings(args), data=checked, **given)
    if not args.json:
        for line in report.lines():
            print(escape(line))
    if not report.clean:
        checked_report = report.to_dict()
        if args.json:
            print(to_json({"submitted": False, "reasons": failure_reasons(checked_report), "check": checked_report}))
        return refuse(failure_line(checked_report) or "the check failed")

    data = {
        "name": name,
        "author": author,
        "description": report.description,
        "sha256": sha,
        "file": stored.name,
        "source": str(path),
        "runtime": src.runtime if src else "python",
        "files": {rel: hashlib.sha256(data).hexdigest() for rel, data in files.items()} or {stored.name: sha},
        **({"program": report.program} if report.program else {}),
        "submitted": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "arena_version": __version__,
        "check": report.to_dict(),
    }
    if previous:
        data["replaces"] = previous
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if checked is not None:
            write_atomic(stored, checked)  # the bytes that were checked, not the file as it is now
        else:
            store_folder(stored, files)
        write_atomic(manifest, (to_json(data) + "\n").encode())
    except OSError as exc:
        raise UsageError(f"{folder}: cannot store the submission: {exc.strerror or exc}") from None
    if args.json:
        print(to_json({"submitted": True, "bot": str(stored), "manifest": str(manifest), "sha256": sha}))
    else:
        verb = "replaced" if previous else "submitted"
        print(
            f"{verb}: {escape(stored)} and {escape(manifest)} (sha256 {sha[:12]}"
            + (f", author {escape(author, 200)}" if author else "")
            + ")"
        )
    return 0


def stored_sha256(stored: Path) -> str:
    """The sha256 of a stored submission: a bot file's bytes, a bot folder's listing."""
    if stored.suffix != ".py":  # a program's submission: its bundle's sha256 (a folder named .py is refused)
        from ..trust.botsource import read_bot_file

        sha: str = read_bot_file(stored).sha256
        return sha
    return file_sha256(stored)


def store_folder(stored: Path, files: dict[str, bytes]) -> None:
    """Write a bot folder whole or not at all: a new folder beside it, then swapped in (the
    earlier version, when replaced, is removed only once the new one is in place)."""
    import shutil
    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix=f".{stored.name}.", suffix=".tmp", dir=stored.parent))
    try:
        for rel, data in files.items():
            target = tmp / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "xb") as fh:
                fh.write(data)
        old = None
        if os.path.lexists(stored):
            old = stored.parent / f".{stored.name}.old-{os.getpid()}"
            os.rename(stored, old)
        os.rename(tmp, stored)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def refuse(message: str) -> int:
    print(f"arena: error: submission refused: {escape(message, 600)}", file=sys.stderr)
    return 1


def register(sub: Any) -> None:
    p = sub.add_parser(
        "submit",
        help="check a bot and store it in a submissions folder, or upload it to a contest server",
        description="Run `arena check`, then copy a clean bot to DIR (a file <name>.py or <name>.js, or "
        "the folder <name>/) with a manifest DIR/<name>.json (name, author, description, sha256 of every "
        "file, check report, date); or, with --server, upload it to a contest's server, which checks it, "
        "and print the check report.",
    )
    p.add_argument("bot", metavar="BOT", help="the bot: a .py or .js file, or a folder with a bot.toml")
    p.add_argument("--to", metavar="DIR", help="the submissions folder (created if missing)")
    p.add_argument(
        "--server", metavar="URL", help="upload to a contest server (`arena serve`) instead; the server checks it"
    )
    p.add_argument("--token", help="your author token for --server (default: the ARENA_TOKEN environment variable)")
    p.add_argument(
        "--wait",
        type=float,
        default=600.0,
        metavar="S",
        help="with --server: seconds to wait for the check report (default 600)",
    )
    p.add_argument(
        "--author", help="your name, for the manifest (with --replace: kept from the earlier version when not given)"
    )
    p.add_argument("--replace", action="store_true", help="replace an earlier version of a bot with this name")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    add_check_options(p)
    p.set_defaults(func=run)
