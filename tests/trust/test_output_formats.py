"""Every output format is safe for its reader (issue 17, item 3).

Names and authors are contestant text, and a tournament database handed to the
organiser is hostile too: whatever they hold, a spreadsheet opening the CSV sees
no formula, a markdown renderer no extra column, tag or link, a JSON parser
valid JSON holding the exact text, and a terminal no control sequence. Each
attack goes through the real commands, in every format; the rules themselves
(arena/trust/text.py) are checked on a seeded fuzz of strings.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import io
import json
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from support.cli import run as run_cli

from arena.trust.text import FORMULA_START, csv_cell, escape, md_cell, render_table, to_csv, to_json

ARENA = Path(__file__).resolve().parents[2] / "arena"

#: Names a bot can give itself (Bot.name): formulas, column forgers, line breaks,
#: terminal escapes (OSC 52 clipboard write), a bidi override, a lone surrogate, markup.
PAYLOADS = [
    '=HYPERLINK("http://x","y")',
    "+1",
    "-1+2",
    "@SUM(A1)",
    "a|b|c",
    "line\nbreak|x",
    "\x1b]52;c;aGk=\x07",
    "\u202eevil",
    "\udc80lone",
    " =SUM(1)",
    "\uff1dFULL",
    "`c`*b*<i>&lt;\\|",
]

#: What a spreadsheet reads as a formula start (an independent copy of the rule).
FORMULA = set("=+-@\t\r\n") | {"\uff1d", "\uff0b", "\uff0d", "\uff20"}

FORMATS = ("table", "markdown", "csv", "json")

BOT = (
    (Path(__file__).resolve().parents[2] / "bots" / "random.py")
    .read_text(encoding="utf-8")
    .replace('name = "random"', "name = {name!r}")
)


def write_bots(folder: Path, names: list[str], stems: list[str] | None = None) -> list[str]:
    """Bot files named (Bot.name) ``names``, in files ``STEM.py`` (default b0, b1...)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, name in enumerate(names):
        path = folder / f"{stems[i] if stems else f'b{i}'}.py"
        path.write_text(BOT.replace("{name!r}", repr(name)), encoding="utf-8")
        paths.append(str(path))
    return paths


# -- what each reader must see ---------------------------------------------------


def terminal_safe(text: str) -> None:
    """No escape, C0/C1 control, bidi or other unprintable character but line ends."""
    bad = sorted({ch for ch in text if not (ch.isprintable() or ch == "\n")})
    assert not bad, f"unprintable characters reach the terminal: {bad!r}"


def neutralised(shown: str) -> str:
    """The CSV cell of the text ``shown`` (independently of arena.trust.text)."""
    return "'" + shown if shown[:1] in FORMULA or shown.lstrip()[:1] in FORMULA else shown


def csv_rows(text: str) -> list[list[str]]:
    rows = list(csv.reader(io.StringIO(text)))
    assert rows and all(len(r) == len(rows[0]) for r in rows), "a row with another number of columns"
    for row in rows:
        for cell in row:
            if cell[:1] in FORMULA or cell.lstrip()[:1] in FORMULA:
                assert _number(cell), f"a formula cell: {cell!r}"
    return rows


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def md_split(line: str) -> list[str]:
    """A GFM table row's cells: split at pipes that no backslash escapes, then unescaped."""
    cells, cur, i = [], "", 0
    while i < len(line):
        if line[i] == "\\" and i + 1 < len(line):
            cur += line[i : i + 2]
            i += 2
            continue
        if line[i] == "|":
            cells.append(cur)
            cur = ""
        else:
            cur += line[i]
        i += 1
    cells.append(cur)
    inner = cells[1:-1]  # the leading and trailing pipes
    return [_md_unescape(c.strip()) for c in inner]


def _md_unescape(cell: str) -> str:
    out, i = "", 0
    while i < len(cell):
        if cell[i] == "\\" and i + 1 < len(cell) and not cell[i + 1].isalnum():
            out += cell[i + 1]
            i += 2
        else:
            out += cell[i]
            i += 1
    return out


def md_tables(text: str) -> list[list[list[str]]]:
    """Each markdown table of ``text`` as rows of cells; every row as wide as its header."""
    tables: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            current.append(md_split(line))
        elif current:
            assert all(len(r) == len(current[0]) for r in current), f"a forged column in {current}"
            tables.append(current)
            current = []
    assert tables, text
    return tables


def md_text_safe(text: str) -> None:
    """No markup character a name brought reaches the renderer unescaped: no tag or
    autolink (``<``), entity (``&``), link or image (``[``), code or emphasis."""
    for line in text.splitlines():
        i = 0
        while i < len(line):
            if line[i] == "\\":
                i += 2
                continue
            assert line[i] not in "<&[]`*~$", f"raw {line[i]!r} in {line!r}"
            i += 1


def check_all(fmt: str, out: str, labels: list[str]) -> None:
    """``out`` of format ``fmt`` holds every label, safely for its reader."""
    terminal_safe(out)
    if fmt == "json":
        assert out.isascii()
        found = json.dumps(json.loads(out), ensure_ascii=False)
        for label in labels:
            assert json.dumps(label, ensure_ascii=False)[1:-1] in found
    elif fmt == "csv":
        cells = {c for row in csv_rows(out) for c in row}
        for label in labels:
            assert neutralised(escape(label)) in cells, label
    elif fmt == "markdown":
        cells = {c for table in md_tables(out) for row in table for c in row}
        md_text_safe(out)
        for label in labels:
            assert escape(label) in cells or any(escape(label) in c for c in cells), label
    else:
        for label in labels:
            assert escape(label) in out, label


# -- the rules, on a seeded fuzz ----------------------------------------------------

ALPHABET = "=+-@\t\r\n|\\`*_[]<>&$'\",; aZ09\x1b\x07\x85\x9b\u202e\u2028\udc80\uff1d\uff0d#"


def fuzz(n: int, seed: int = 17) -> list[str]:
    rng = random.Random(seed)
    return PAYLOADS + ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 12))) for _ in range(n)]


def test_csv_cells_hold_no_formula_and_numbers_stay_numbers() -> None:
    assert FORMULA_START >= FORMULA - {"\n"}
    for text in fuzz(400):
        out = to_csv(["name", "score", "ratio"], [[text, -3, -0.25]])
        rows = csv_rows(out)
        assert len(rows) == 2
        assert rows[1] == [neutralised(escape(text)), "-3", "-0.25"]
        terminal_safe(out)
    assert csv_cell(-3) == -3 and csv_cell(2.5) == 2.5 and csv_cell(None) == ""
    assert csv_cell("-3") == "'-3"  # text that looks like a number is still text (RULINGS 52)
    assert csv_cell(float("-inf")) == "'-inf"  # not a number a spreadsheet reads


def test_markdown_cells_keep_their_columns_and_show_their_text() -> None:
    texts = fuzz(400)
    for i in range(0, len(texts), 4):
        chunk = texts[i : i + 4]
        out = render_table([chunk, [1, -2.5, None, "x"]], ["h|1", "h2", "h3", "h4"][: len(chunk)], "markdown")
        terminal_safe(out)
        (table,) = md_tables(out)
        assert len(table[0]) == len(chunk)
        assert table[0] == ["h|1", "h2", "h3", "h4"][: len(chunk)]
        assert table[2] == [escape(t).strip() for t in chunk]  # the text as it is, nothing rendered
    assert md_cell("my_bot") == "my_bot" and md_cell("_x_") == "\\_x\\_"
    assert md_cell("<img src=x onerror=alert(1)>") == "\\<img src=x onerror=alert(1)\\>"


def test_json_is_ascii_valid_and_round_trips_exact_text() -> None:
    texts = fuzz(400)
    doc = {"names": texts, "extra": {t: {"nan": float("nan"), "big": 10**40} for t in texts[:5]}}
    out = to_json(doc)
    assert out.isascii()
    back = json.loads(out)
    assert back["names"] == texts  # lone surrogates and controls included, exactly
    assert all(v == {"nan": None, "big": 10**40} for v in back["extra"].values())
    deep: Any = []
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(ValueError, match="nested"):
        to_json(deep)


def test_terminal_tables_escape_every_cell_and_header() -> None:
    texts = fuzz(200)
    out = render_table([[t, i] for i, t in enumerate(texts)], ["\x1b[2Jname", "n"], "table")
    terminal_safe(out)
    assert len(out.splitlines()) == len(texts) + 2  # no name adds a line
    assert render_table([["1e5", 1e5]], ["text", "number"], "table", floatfmt=".1f").splitlines()[2].split() == [
        "1e5",
        "100000.0",
    ]


# -- through the commands -------------------------------------------------------------


@pytest.mark.parametrize("group", [PAYLOADS[:6], PAYLOADS[6:]], ids=["formulas", "escapes"])
def test_play_results_in_every_format(tmp_path: Path, capsys: pytest.CaptureFixture[str], group: list[str]) -> None:
    bots = write_bots(tmp_path, group)
    base = ["play", *bots, "--trusted", "--games", "1", "--seed", "3", "-q"]
    code, out, err = run_cli(capsys, *base, "--format", "json")
    assert code == 0, err
    labels = [row["bot"] for row in json.loads(out)["standings"]]
    assert len(labels) == len(group)
    for fmt in FORMATS:
        code, out, err = run_cli(capsys, *base, "--format", fmt)
        assert code == 0, err
        check_all(fmt, out, labels)
        terminal_safe(err)


def test_sprt_lines_follow_the_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bots = write_bots(tmp_path, ["<b>a|b</b>", "=1+1"])
    base = ["play", *bots, "--trusted", "--sprt", "0,50", "--games", "2", "--seed", "3", "-q"]
    for fmt in ("markdown", "csv", "table"):
        code, out, err = run_cli(capsys, *base, "--format", fmt)
        assert code == 0, err
        terminal_safe(out + err)
        if fmt == "markdown":
            md_tables(out)
            assert "<b>" not in out and "\\<b\\>a\\|b\\</b\\>" in out
        if fmt == "csv":
            csv_rows(out)  # the verdict lines went to stderr: stdout stays one table
            assert "SPRT" in err


def tournament_db(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, list[str]]:
    """A finished two-player tournament of bots with hostile file names (a tournament names
    a bot file by its file name; ``\udc80`` is the byte 0x80, not UTF-8) and manifest authors."""
    folder = tmp_path / "sub"
    stems = ["@SUM(A1)|x", "\u202e-1+2\x1b]52;c;aGk=\x07\n\udc80"]
    authors = ['=HYPERLINK("http://x","y")', "a|b\x1b[31m\nc"]
    bots = write_bots(folder, ["one", "two"], stems)
    for path, author in zip(bots, authors, strict=True):
        p = Path(path)
        sha = hashlib.sha256(p.read_bytes()).hexdigest()
        manifest = {"name": p.stem, "file": p.name, "sha256": sha, "author": author}
        p.with_suffix(".json").write_text(json.dumps(manifest), encoding="utf-8")
    db = tmp_path / "t.sqlite"
    code, out, err = run_cli(
        capsys, "tournament", *bots, "--trusted", "-k", "2", "-n", "1", "-j", "1", "--seed", "5", "--db", str(db), "-q"
    )
    assert code == 0, err
    terminal_safe(out + err)
    return db, authors


def test_tournament_and_standings_in_every_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db, authors = tournament_db(tmp_path, capsys)
    code, out, err = run_cli(capsys, "standings", str(db), "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    labels = [r["bot"] for r in doc["overall"]["standings"]]
    shown_authors = [r["author"] for r in doc["overall"]["standings"]]
    assert all(a for a in shown_authors)
    for fmt in FORMATS:
        code, out, err = run_cli(capsys, "standings", str(db), "--format", fmt)
        assert code == 0, err
        check_all(fmt, out, labels + shown_authors)
        if fmt == "csv":  # a computed negative number stays a number
            (ordinal,) = {r["ordinal"] for r in csv.DictReader(io.StringIO(out)) if r["bot"].endswith("x")}
            assert _number(ordinal)
    # `arena tournament` prints the same standings
    bots = [str(p) for p in sorted((tmp_path / "sub").glob("*.py"))]
    argv = ["tournament", *bots, "--trusted", "-k", "2", "-n", "1", "-j", "1", "--seed", "5", "--db", str(db), "-q"]
    code, out, err = run_cli(capsys, *argv, "--format", "csv")
    assert code == 0, err
    check_all("csv", out, labels + shown_authors)


def test_a_hostile_database_cannot_fool_the_standings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The database is written by the organiser's tool, but handed around: its labels and
    # authors are raw text here (no clean_name). Printable payloads (formulas, forged
    # columns, tags) are shown inert in every format; a control character or bidi override
    # makes the database damaged (its reader refuses it in one line, shown escaped).
    db, _ = tournament_db(tmp_path, capsys)
    raw = ["=cmd|' /C calc'!A0", "x|y | forged | row |<script>"]
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE bots SET label = ? WHERE bot = 0", (raw[0],))
        conn.execute("UPDATE bots SET label = ? WHERE bot = 1", (raw[1],))
        authors = json.dumps({raw[0]: "@evil", raw[1]: "+1|<script>"}, sort_keys=True, separators=(",", ":"))
        conn.execute("UPDATE meta SET value = ? WHERE key = 'authors'", (authors,))
    conn.close()
    for fmt in FORMATS:
        code, out, err = run_cli(capsys, "standings", str(db), "--format", fmt)
        assert code == 0, err
        check_all(fmt, out, [*raw, "@evil", "+1|<script>"])
        if fmt == "json":
            assert {r["bot"] for r in json.loads(out)["overall"]["standings"]} == set(raw)
        if fmt == "markdown":
            assert "<script>" not in out
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE bots SET label = ? WHERE bot = 0", ("x\x1b]8;;http://x\x07\u202e\r\x9b2J",))
    conn.close()
    for fmt in FORMATS:
        code, out, err = run_cli(capsys, "standings", str(db), "--format", fmt)
        assert code == 2 and out == ""
        assert err.count("\n") == 1 and "damaged tournament database" in err
        terminal_safe(err)


def test_report_warnings_from_database_values_are_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import arena.report.site as report

    def fake(db: Any, out: Any, **_: Any) -> Any:
        warning = "game 2p-t0\x1b]52;c;aGk=\x07\u202e\nforged line re-played otherwise than stored"
        return report.ReportResult(Path(out) / "index.html", 1, 1, [warning])

    monkeypatch.setattr(report, "build_report", fake)
    code, out, err = run_cli(capsys, "report", "--db", str(tmp_path / "x.sqlite"), "--out", str(tmp_path / "site"))
    assert code == 0, err
    terminal_safe(out + err)
    assert len(err.splitlines()) == 1 and "\\x1b]52" in err


def test_submit_and_rules_messages_are_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (bot,) = write_bots(tmp_path / "src", ["alice"])
    author = "=1+1|\x1b[2J\u202e\udc80"
    code, out, err = run_cli(capsys, "submit", bot, "--to", str(tmp_path / "sub"), "--author", author, "--games", "1")
    assert code == 0, err
    terminal_safe(out + err)
    assert "author " + escape(author) in out
    manifest = json.loads((tmp_path / "sub" / "alice.json").read_text(encoding="utf-8"))
    assert manifest["author"] == author  # stored exactly (JSON escapes), shown escaped
    for argv in (["rules", "--list"], ["rules"], ["rules", "--json"]):
        code, out, err = run_cli(capsys, *argv)
        assert code == 0, err
        terminal_safe(out)


# -- one module owns the rules -----------------------------------------------------------

#: The modules that print, or render a format, for a reader.
#: The command modules of arena/cli/ but those that render nothing themselves: options.py (prints
#: nothing), replay.py (prints record.format_game's lines, escaped there), view.py (the page is
#: rendered in arena/web/), and verify.py (the independent checker's command keeps the checker's
#: own output rules: json.dumps's ASCII, its `printable`).
NOT_RENDERING = ("options.py", "replay.py", "view.py", "verify.py")
OUTPUT_MODULES = {
    *(p.relative_to(ARENA).as_posix() for p in (ARENA / "cli").glob("*.py") if p.name not in NOT_RENDERING),
    "authoring/check.py",
    "plugins/builtin.py",
    "tournament/results/standings.py",
    "tournament/results/separation.py",
}


def test_output_rules_come_from_one_module() -> None:
    # Only arena/trust/text.py draws tables or writes CSV; the output modules take JSON and
    # escaping from it too. arena/verify/ is exempt: it imports nothing from arena, by design
    # (its JSON is json.dumps's ASCII, its text through its own `printable`).
    found = []
    for path in sorted(ARENA.rglob("*.py")):
        rel = path.relative_to(ARENA).as_posix()
        if rel == "trust/text.py" or rel.startswith("verify/"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported_safetext = False
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                if any(n.split(".")[0] in ("csv", "tabulate") for n in names) and not getattr(node, "level", 0):
                    found.append(f"{rel}:{node.lineno} imports {names}")
                if isinstance(node, ast.ImportFrom) and (node.module or "").endswith(("trust.text", "trust")):
                    imported_safetext = True
            if (
                rel in OUTPUT_MODULES
                and isinstance(node, ast.Attribute)
                and node.attr == "dumps"
                and isinstance(node.value, ast.Name)
                and node.value.id == "json"
            ):
                found.append(f"{rel}:{node.lineno} json.dumps (use safetext.to_json)")
        if rel in OUTPUT_MODULES and not imported_safetext:
            found.append(f"{rel}: does not import its output rules from arena.trust.text")
    assert found == []
