"""What an upload is stored as, and read back as: every kind of bot the harness plays.

A Python bot file is stored as its bytes. A program is stored as the loader stores it in a
tournament database: its *bundle* (:func:`arena.trust.botfolder.bundle`: the runtime and the files in
one text), which ``arena submit --server`` sends for a ``.js`` file or a bot folder with a
``bot.toml``; a ``.js`` file sent as it is (the upload page) is bundled here as the loader bundles
it. A stored bundle is read back checked (:func:`arena.trust.botfolder.unbundle`: the database is
untrusted input), so the check, the ladder and the final play exactly the stored bytes.
"""

from __future__ import annotations

from typing import Any

from ...errors import BotLoadError
from ...trust.botfolder import BUNDLE_MAGIC, MANIFEST, parse_manifest, unbundle
from ...trust.botsource import BotSource, bot_source, stored_source

MAGIC = BUNDLE_MAGIC.encode()


def is_bundle(data: bytes) -> bool:
    return data.startswith(MAGIC)


def as_stored(data: bytes, filename: str | None) -> bytes:
    """The bytes to store for an upload: a ``.js`` file bundled as the loader bundles it, a
    bundle checked whole, anything else (a Python bot file) as it is.

    :raises BotLoadError: a ``.js`` file that is not UTF-8, or a bundle that breaks its rules.
    """
    if is_bundle(data):
        unbundle(data.decode("utf-8", "replace"), filename or "upload")
        return data
    if filename and filename.endswith(".js"):
        src = bot_source(data, filename)
        if src.problem:  # pragma: no cover - bot_source raises when not lenient
            raise BotLoadError(src.problem, path=filename)
        return src.source.encode("utf-8")
    return data


def declared_name(data: bytes) -> str | None:
    """A program's own name for itself (its bot.toml's ``name``), if it gives one."""
    if not is_bundle(data):
        return None
    try:
        runtime, files = unbundle(data.decode("utf-8", "replace"), "upload")
        if runtime != "program":
            return None
        fields: dict[str, Any] = parse_manifest(dict(files)[MANIFEST], MANIFEST)
    except BotLoadError:
        return None
    name = fields.get("name")
    return name if isinstance(name, str) else None


def stored_bot(bot: str, source: bytes) -> BotSource:
    """The bot in an upload's stored bytes.

    :raises BotLoadError: not UTF-8, or a bundle that breaks its rules."""
    if is_bundle(source):
        src = stored_source(bot, source.decode("utf-8", "replace"))
        if src.problem:
            raise BotLoadError(src.problem, path=bot)
        return src
    return bot_source(source, f"{bot}.py")
