"""A bot's source as untrusted input: a bot file read (a regular file or nothing, never past its
limit), its text checked (size, nesting, hidden characters, its name and docstring), and the
:class:`BotSource` every runtime starts from.
"""

from __future__ import annotations

import ast
import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

from ..errors import BotLoadError
from .files import NotRegularFile, Untrusted, read_untrusted
from .text import clean_name, escape, storable

MAX_SOURCE_BYTES = 256 * 1024
#: Deepest syntax tree a bot file may have (levels of nested statements and expressions;
#: ordinary bots stay under 30). Deeper trees are refused before any recursive pass
#: (the restricting transformer, the compiler) could run out of stack.
MAX_NESTING = 150
#: Characters refused anywhere in bot source, even in strings and comments: C0 controls but
#: tab, newline, form feed and carriage return; DEL and C1 controls; the bidi controls
#: ("Trojan Source", CVE-2021-42574). Inside strings they can be written as escapes.
_HIDDEN = re.compile("[\x01-\x08\x0b\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


@dataclass(frozen=True)
class BotSource:
    """A bot's code and identity."""

    name: str
    source: str
    path: str | None = None
    description: str = ""
    origin: str = "file"  # "file" or "registry"
    #: Why this file cannot be loaded at all (not UTF-8, too large...): set only by a lenient
    #: read (a tournament enters such a file and records it as crashed in each of its games).
    problem: str | None = None
    #: What runs it: "python" (a bot file, docs/bot-api.md), "node" (a ``.js`` program) or "program"
    #: (a folder with a ``bot.toml``, :mod:`arena.trust.botfolder`; ``source`` is its bot.toml), docs/protocol.md.
    runtime: str = "python"
    #: A program's files (relative path, bytes), sorted; its ``source`` is their bundle
    #: (:func:`arena.trust.botfolder.bundle`: what is stored and hashed). Empty for a Python bot file.
    files: tuple[tuple[str, bytes], ...] = ()
    #: A program's built folder (its bot.toml's ``build`` run over ``files``), when it was built
    #: once before its factory is made (a tournament's parent, the server's build queue): the
    #: factory runs these and builds nothing. None: built when its factory is made.
    built: tuple[tuple[str, bytes], ...] | None = None

    def __post_init__(self) -> None:
        # Names and descriptions are shown everywhere: printable, bounded, never empty.
        object.__setattr__(self, "name", clean_name(self.name))
        object.__setattr__(self, "description", escape(self.description, 200))

    @property
    def sha256(self) -> str:
        import hashlib  # noqa: PLC0415 - here, not at the top: a sandbox template holds no hashing modules

        return hashlib.sha256(source_bytes(self.source)).hexdigest()

    @property
    def label(self) -> str:
        """How records and tables name the code: registry name or file path (storable text)."""
        return self.name if self.origin == "registry" else storable(self.path or self.name)


def source_bytes(text: str) -> bytes:
    """The bytes of bot source as read (undecodable bytes were kept as surrogate escapes)."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def parse_source(text: str, where: str | None = None) -> ast.Module:
    """Parse bot source, whatever it holds, into a tree every later pass can walk.

    :raises BotLoadError: one line saying what is wrong: too large, a null byte, a lone
        surrogate, a syntax error, too deeply nested (here or in the parser), or too big to parse.
    """
    where = where or "bot"
    size = len(source_bytes(text))
    if size > MAX_SOURCE_BYTES:
        raise BotLoadError(f"bot source is {size} bytes; the limit is {MAX_SOURCE_BYTES}", path=where)
    at = text.find("\x00")
    if at >= 0:
        raise BotLoadError("holds a null byte; a bot file is text", path=where, line=text.count("\n", 0, at) + 1)
    odd = _HIDDEN.search(text)
    if odd:
        code = ord(odd.group())
        what = "a bidi control character" if code > 0xFF else "a control character"
        raise BotLoadError(
            f"holds {what} (U+{code:04X}), which can make code read otherwise than it runs "
            "or act on a terminal; write it as an escape in a string",
            path=where,
            line=text.count("\n", 0, odd.start()) + 1,
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise BotLoadError(
            f"holds a character that is not text (U+{ord(text[exc.start]):04X}, a lone surrogate)",
            path=where,
            line=text.count("\n", 0, exc.start) + 1,
        ) from None
    try:
        with warnings.catch_warnings():  # a bot's SyntaxWarnings must not reach the organiser's terminal
            warnings.simplefilter("ignore")
            tree = ast.parse(text, filename="<bot>")
    except SyntaxError as exc:
        raise BotLoadError(f"syntax error: {escape(exc.msg, 120)}", path=where, line=exc.lineno) from None
    except (RecursionError, MemoryError) as exc:
        raise BotLoadError(
            f"too deeply nested to parse ({type(exc).__name__}); the limit is {MAX_NESTING} levels", path=where
        ) from None
    except (ValueError, OverflowError) as exc:
        raise BotLoadError(f"cannot parse: {type(exc).__name__}: {escape(exc, 120)}", path=where) from None
    line = too_deep(tree, MAX_NESTING)
    if line is not None:
        raise BotLoadError(f"nested more than {MAX_NESTING} levels deep", path=where, line=line or None)
    return tree


def too_deep(tree: ast.AST, limit: int) -> int | None:
    """The line of the first node deeper than ``limit`` levels (0 when it has none), or None.
    Iterative: a tree of any depth is measured without recursion."""
    stack: list[tuple[ast.AST, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return getattr(node, "lineno", 0)
        depth += 1
        stack.extend((child, depth) for child in ast.iter_child_nodes(node))
    return None


def describe(source: str) -> tuple[str | None, str]:
    """(``Bot.name`` if set literally, first docstring line) of bot source, without running it;
    (None, "") for source that does not parse (the load error is reported where it loads)."""
    try:
        tree = parse_source(source)
    except BotLoadError:
        return None, ""
    doc = (ast.get_docstring(tree) or "").strip().splitlines()
    name = None
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Bot":
            for item in node.body:
                if (
                    isinstance(item, ast.Assign)
                    and len(item.targets) == 1
                    and isinstance(item.targets[0], ast.Name)
                    and item.targets[0].id == "name"
                    and isinstance(item.value, ast.Constant)
                    and isinstance(item.value.value, str)
                ):
                    name = item.value.value
    return name, (doc[0] if doc else "")


def read_bot_file(
    path: str | os.PathLike[str],
    origin: str = "file",
    name: str | None = None,
    *,
    lenient: bool = False,
    single_link: bool = False,
) -> BotSource:
    """Read a bot file (at most :data:`MAX_SOURCE_BYTES` of it) through
    :func:`~arena.trust.files.read_untrusted`: a regular file or a refusal, never a block.

    :raises BotLoadError: missing, or not a regular file (a symbolic link, FIFO, device,
        folder; a hard link when ``single_link``: inside a submissions folder); and, unless
        ``lenient``, unreadable, too large or not UTF-8. With ``lenient`` such a file comes
        back with :attr:`BotSource.problem` set (its name is the file name), so a tournament
        can enter it as a bot that crashes.
    """
    from ..trust.botfolder import is_bot_folder, read_bot_folder

    if is_bot_folder(path):  # a bot program's folder (bot.toml); a folder named like a bot file is refused below
        try:
            declared, manifest, doc, files = read_bot_folder(path, single_link=single_link)
        except BotLoadError as exc:
            if not lenient:
                raise
            return BotSource(name or Path(path).name, "", str(path), "", origin, problem=exc.message, runtime="program")
        from ..trust.botfolder import bundle

        stored = bundle("program", files)
        if len(source_bytes(stored)) > MAX_SOURCE_BYTES:
            return _refuse(
                f"the folder's files take more than {MAX_SOURCE_BYTES} bytes stored", path, origin, name, lenient
            )
        return BotSource(name or declared, stored, str(path), doc, origin, runtime="program", files=files)
    try:
        got = _read(path, single_link)
    except OSError as exc:
        return _refuse(f"cannot read: {exc.strerror or exc}", path, origin, name, lenient)
    if got.too_large:
        return _refuse(
            f"bot source is {max(got.size, len(got.data))} bytes; the limit is {MAX_SOURCE_BYTES}",
            path,
            origin,
            name,
            lenient,
            got.data.decode("utf-8", "surrogateescape"),
        )
    return bot_source(got.data, path, origin, name, lenient=lenient)


def read_bot_bytes(path: str | os.PathLike[str]) -> bytes:
    """A bot file's bytes, read once (``arena submit`` checks, hashes and stores exactly these).

    :raises BotLoadError: missing, not a regular file, unreadable or too large.
    """
    try:
        got = _read(path, False)
    except OSError as exc:
        raise BotLoadError(f"cannot read: {exc.strerror or exc}", path=storable(str(path))) from None
    if got.too_large:
        raise BotLoadError(
            f"bot source is {max(got.size, len(got.data))} bytes; the limit is {MAX_SOURCE_BYTES}",
            path=storable(str(path)),
        )
    return got.data


def _read(path: str | os.PathLike[str], single_link: bool) -> Untrusted:
    """The file's bytes (at most ``MAX_SOURCE_BYTES + 1``). :raises OSError: unreadable;
    :raises BotLoadError: missing or not a regular file (whatever ``lenient`` says)."""
    try:
        return read_untrusted(path, MAX_SOURCE_BYTES, single_link=single_link)
    except FileNotFoundError:
        raise BotLoadError("no such file", path=storable(str(path))) from None
    except NotRegularFile as exc:
        raise BotLoadError(exc.reason, path=exc.path) from None


def _refuse(
    message: str, path: str | os.PathLike[str], origin: str, name: str | None, lenient: bool, source: str = ""
) -> BotSource:
    """Raise the load error, or (``lenient``) return a source that records it as its problem."""
    if not lenient:
        raise BotLoadError(message, path=storable(str(path)))
    return BotSource(name or Path(path).stem, source, str(path), "", origin, problem=message)


def bot_source(
    data: bytes, path: str | os.PathLike[str], origin: str = "file", name: str | None = None, *, lenient: bool = False
) -> BotSource:
    """The bot in ``data`` (a file's bytes), named as :func:`read_bot_file` names it.

    :raises BotLoadError: not UTF-8 (unless ``lenient``: see :func:`read_bot_file`).
    """
    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return _refuse(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line})",
            path,
            origin,
            name,
            lenient,
            data.decode("utf-8", "surrogateescape"),
        )
    if str(path).endswith(".js"):
        from ..trust.botfolder import bundle

        files = (("bot.js", data),)
        stored = bundle("node", files)
        doc = program_description("node", files)
        return BotSource(name or Path(path).stem, stored, str(path), doc, origin, runtime="node", files=files)
    from ..trust.botfolder import BUNDLE_MAGIC

    if source.startswith(BUNDLE_MAGIC):  # a database would read it back as a program
        why = f"starts with {BUNDLE_MAGIC.strip()!r}, the header of a stored program"
        return _refuse(why, path, origin, name, lenient)
    declared, doc = describe(source)
    return BotSource(name or declared or Path(path).stem, source, str(path), doc, origin)


def stored_source(name: str, source: str) -> BotSource:
    """A bot from its stored source (a tournament database's): a Python bot file's text, or a
    program's bundle (:func:`arena.trust.botfolder.unbundle`, checked: the database is untrusted).
    A bundle that breaks the rules comes back with :attr:`BotSource.problem` set."""
    from ..trust.botfolder import BUNDLE_MAGIC, unbundle

    if not source.startswith(BUNDLE_MAGIC):
        return BotSource(name, source, None, "", "file")
    try:
        runtime, files = unbundle(source, name)
    except BotLoadError as exc:
        return BotSource(name, source, None, "", "file", problem=exc.message, runtime="program")
    return BotSource(name, source, None, program_description(runtime, files), "file", runtime=runtime, files=files)


def program_description(runtime: str, files: tuple[tuple[str, bytes], ...]) -> str:
    """A program's description as its author wrote it, found alike in a file, a folder and a stored
    bundle: a ``.js`` file's leading comment (:func:`js_description`), a folder's bot.toml ``description``."""
    from ..trust.botfolder import MANIFEST, parse_manifest

    found = dict(files)
    if runtime == "node":
        return js_description(found.get("bot.js", b"").decode("utf-8", "replace"))
    try:
        return parse_manifest(found[MANIFEST], "bot").get("description", "") if MANIFEST in found else ""
    except BotLoadError:
        return ""


def js_description(text: str) -> str:
    """The first line of text in the comments that open a ``.js`` file (``// ...`` or ``/* ... */``,
    before any code), or ""."""
    block = False
    for raw in text.splitlines():
        line = raw.strip()
        if block or line.startswith("/*"):
            body = line[2:] if not block else line
            block = "*/" not in body
            body = body.split("*/")[0].lstrip("*").strip()
        elif line.startswith("//"):
            body = line.lstrip("/").strip()
        elif not line or line.startswith("#!"):
            continue
        else:
            return ""
        if body:
            return body
    return ""
