"""Bot programs (issue 20): protocol v1 over stdio, under the program sandbox.

Every program in tests/sandbox/programs/hostile_programs/ attacks from node and says what must happen in
its first line (``// expect: KIND`` -- the hostile seat's faults are of that kind, or
``clean``: nobody faults). In each game the hostile program sits at seat 1 between two
trusted greedy bots, which must be unaffected; every record passes the rules checker.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
from pathlib import Path

import pytest

from arena.game.referee import GameOutcome, Referee
from arena.game.rules import CONTEST
from arena.sandbox import Limits
from arena.sandbox.programs.runtimes import program_factory
from arena.seats.loader import load_trusted, resolve_bot
from arena.trust.botsource import read_bot_file
from arena.verify import check_lines

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

HERE = Path(__file__).parent / "hostile_programs"
PROGRAMS = sorted(HERE.glob("*.js"))
LIMITS = Limits(
    move_seconds=0.3,
    game_seconds=4.0,
    load_seconds=2.0,
    startup_seconds=30.0,
    memory_bytes=128 * 2**20,
    wall_factor=2.0,
    wall_grace=0.3,
)
PATIENT = dataclasses.replace(LIMITS, move_seconds=2.0, game_seconds=30.0, load_seconds=5.0, wall_factor=30.0)
ROOT = Path(__file__).parents[3]


def says_of(outcome: GameOutcome, seat: int = 1) -> list[str]:
    return [e["text"] for e in outcome.log if e["event"] == "say" and e["seat"] == seat]


def play(path: Path, limits: Limits, seed: int = 5) -> GameOutcome:
    src = read_bot_file(path)
    greedy = load_trusted(resolve_bot("greedy"))
    factory = program_factory(src, limits)
    players = [greedy(seed, 0), factory(seed, 1), greedy(seed, 2)]
    try:
        return Referee(CONTEST).play(players, seed=seed, bots=["greedy", src.label, "greedy"])
    finally:
        for p in players:
            p.close()
        factory.close()


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_hostile_program_is_contained(path: Path, tmp_path: Path) -> None:
    lines = path.read_text().splitlines()
    expect = set(lines[0].removeprefix("// expect: ").split("|"))
    check = lines[1].removeprefix("// check: ") if lines[1].startswith("// check:") else ""
    slow = expect <= {"clean", "memory"}
    outcome = play(path, PATIENT if slow else LIMITS)
    assert outcome.log[-1]["event"] == "end" and check_lines(outcome.log) == []
    kinds = {f.kind.value for f in outcome.faults if f.seat == 1 and f.kind.value != "retired"}
    assert all(f.seat == 1 for f in outcome.faults), outcome.faults  # the honest seats are unaffected
    if "clean" in expect and not kinds:
        pass
    else:
        assert kinds and kinds <= expect, (kinds, [f.detail for f in outcome.faults])
    said = " ".join(e["text"] for e in outcome.log if e["event"] == "say" and e["seat"] == 1)
    if check == "no-files":
        assert "wrote" not in said and "EPERM" in said or "EACCES" in said, said
        assert not os.path.exists("/tmp/arena-escape-js") and not os.path.exists("/dev/shm/arena-escape-js")
    elif check == "no-network":
        assert "net:" in said and "CONNECTED" not in said, said
    elif check in ("per-move", "protocol"):  # the searching programs (tests/sandbox/programs/test_search_programs.py)
        wanted = "per-move limit" if check == "per-move" else "protocol violation"
        details = [f.detail for f in outcome.faults if f.kind.value != "retired"]
        assert details and all(wanted in d and "backstop" not in d for d in details), details
    elif check == "no-secret":
        assert "READ /" not in said and "PATH=" not in said and "arena" not in said, said
        listed = {line.split()[1]: line for line in says_of(outcome) if line.startswith("LIST ")}
        assert set(listed) == {"/"}, listed  # /tmp, /work, /srv, /home, /root, /proc: not there at all
        assert set(listed["/"].split()[2].split(",")) == {"usr", "etc", "bin", "lib", "lib64", "sbin", "dev", "bot"}


def test_js_example_plays_a_stream_without_faults() -> None:
    """examples/shed.js: one process plays several games (a stream), never faulting."""
    src = read_bot_file(ROOT / "examples" / "shed.js")
    greedy = load_trusted(resolve_bot("greedy"))
    factory = program_factory(src, PATIENT)
    stream = factory.stream()
    try:
        assert set(factory.report) >= {"workdir", "rlimits", "netns", "uid", "no_new_privs", "seccomp"}
        for g in range(3):
            players = [stream(g, 0, deal=g), greedy(g, 1)]
            try:
                outcome = Referee(CONTEST).play(players, seed=100 + g, bots=[src.label, "greedy"])
            finally:
                for p in players:
                    p.close()
            assert outcome.faults == [] and check_lines(outcome.log) == []
        assert stream.processes == 1 and stream.games == 3
    finally:
        stream.close()
        factory.close()


def test_a_tournament_refuses_a_program_runtime_with_a_weak_layer() -> None:
    """The tournament's sandbox check probes each program runtime's own layers: one missing
    (seccomp off here) is refused unless --allow-weak-sandbox, as for Python bot files."""
    from types import SimpleNamespace

    from arena.cli.dbgames import check_sandbox
    from arena.errors import UsageError

    js = SimpleNamespace(trusted=True, src=read_bot_file(ROOT / "examples" / "shed.js"))
    plan = SimpleNamespace(entrants=[js, SimpleNamespace(trusted=True, src=resolve_bot("greedy"))])
    weak = dataclasses.replace(PATIENT, seccomp=False)
    with pytest.raises(UsageError, match="node:seccomp"):
        check_sandbox(plan, weak, allow_weak=False, quiet=True)
    found = check_sandbox(plan, PATIENT, allow_weak=False, quiet=True)
    assert found is not None and found["layers"]["node:seccomp"] == "active" and not found["missing"]


@pytest.mark.parametrize("which", ["examples/contest2012.js", "examples/demo2012.js"])
def test_2012_api_bots_play_unchanged_without_faults(which: str) -> None:
    """The 2012 API through the shim and MooTools: the example, and the announcement's demo (the
    docs' listing: tests/sandbox/programs/test_contest2012.py), play clean games whose records pass
    the rules checker."""
    for seed in (1, 2):
        outcome = play(ROOT / which, PATIENT, seed=seed)
        assert outcome.faults == [] and check_lines(outcome.log) == []
        assert any(e["event"] == "put" and e["seat"] == 1 for e in outcome.log)


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
@pytest.mark.parametrize("lang", ["python-stdio", "js", "cpp"])
def test_each_starter_kit_from_arena_new_passes_arena_check(
    lang: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from arena.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["new", "kit_bot", "--lang", lang]) == 0
    made = "kit_bot.js" if lang == "js" else "kit_bot"
    assert main(["new", "kit_bot", "--lang", lang]) == 2  # never over what exists
    capsys.readouterr()
    assert main(["check", made, "--games", "1"]) == 0
    out = capsys.readouterr().out
    assert "8/8 active" in out and f"{made}: clean" in out, out


def folder(tmp_path: Path, toml: str, **files: str) -> Path:
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "bot.toml").write_text(toml, encoding="utf-8")
    for name, text in files.items():
        (bot / name).write_text(text, encoding="utf-8")
    return bot


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_a_failed_build_is_one_line_with_the_compilers_last_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from arena.cli import main

    bot = folder(
        tmp_path, 'language = "cpp"\nbuild = "g++ -o bot bot.cpp"\nrun = "./bot"\n', **{"bot.cpp": "int main( {"}
    )
    assert main(["play", str(bot), "greedy", "--games", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the build failed (exited with status 1)" in err[0] and "error" in err[0], err


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('language = "x"\n', "no 'run'"),
        ('language = "x"\nrun = "./bot"\nrm = "-rf /"\n', "unknown key 'rm'"),
        ("language = [\n", "bot.toml:"),
        ('language = "x"\nrun = "./missing"\n', "not in the folder"),
        ('language = "x"\nrun = "no-such-program-here"\n', "no program"),
    ],
)
def test_a_bad_bot_toml_is_refused_in_one_line(
    toml: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from arena.cli import main

    assert main(["play", str(folder(tmp_path, toml)), "greedy", "--games", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


def test_a_build_writes_only_its_own_folder_and_is_bounded(tmp_path: Path) -> None:
    """A hostile build: it sees none of the organiser's files (a world-readable secret in the
    host's /tmp included); writes to /tmp land in its private tmpfs, others are refused; the
    network is unreachable; it cannot outlive its time limit."""
    from arena.errors import BotLoadError
    from arena.sandbox.programs.build import BuildLimits, run_build

    mark = f"arena-build-escape-{os.getpid()}"
    secret = Path("/tmp") / f"{mark}-secret"
    secret.write_text("organiser's secret", encoding="utf-8")
    secret.chmod(0o644)  # world-readable, in a world-readable folder: a build must not see it anyway
    try:
        script = (
            f"echo x > /tmp/{mark}; echo x > /dev/shm/{mark}; echo x > /root/{mark}; "
            "(exec 3<>/dev/tcp/127.0.0.1/22) 2>/dev/null && echo NET > net.txt; "
            f"cat {secret} > leak.txt 2>/dev/null; ls /tmp > seen.txt; ls / > root.txt; echo built > out.txt"
        )
        built = run_build(f"bash -c '{script}'", {"bot.toml": b""}, "t")
    finally:
        secret.unlink()
    assert built["out.txt"] == b"built\n" and "net.txt" not in built and built["leak.txt"] == b""
    for where in ("/tmp", "/dev/shm", "/root"):
        assert not os.path.exists(f"{where}/{mark}")
    assert built["seen.txt"].split() == [mark.encode()]  # its private /tmp: the host's is not visible
    assert set(built["root.txt"].split()) == {b"usr", b"etc", b"bin", b"lib", b"lib64", b"sbin", b"dev", b"bot", b"tmp"}
    with pytest.raises(BotLoadError, match="over the build's 0.5 s"):
        run_build("sleep 30", {}, "t", BuildLimits(seconds=0.5))


def test_submit_stores_a_bot_folder_with_every_files_sha256_and_a_tournament_verifies_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bot folder is stored whole with a manifest naming its runtime and each file's sha256;
    a file changed after submission is refused by the tournament in one line."""
    import hashlib
    import json

    from arena.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["new", "folder_bot", "--lang", "python-stdio"]) == 0
    assert main(["submit", "folder_bot", "--to", "subs", "--games", "1"]) == 0
    assert main(["new", "js_bot", "--lang", "js"]) == 0
    assert main(["submit", "js_bot.js", "--to", "subs", "--games", "1"]) == 0
    assert main(["submit", "js_bot.js", "--to", "subs", "--games", "1"]) == 1  # the very same bot again
    capsys.readouterr()
    assert main(["tournament", "subs", "greedy", "--games", "1", "--db", "ok.db", "-q"]) == 0  # both verified
    manifest = json.loads((tmp_path / "subs" / "folder_bot.json").read_text())
    assert manifest["runtime"] == "program" and manifest["program"]["language"] == "python"
    for rel in ("bot.py", "bot.toml"):
        assert (
            manifest["files"][rel] == hashlib.sha256((tmp_path / "subs" / "folder_bot" / rel).read_bytes()).hexdigest()
        )
    assert main(["submit", "folder_bot", "--to", "subs", "--games", "1"]) == 1  # the very same bot again
    with open(tmp_path / "subs" / "folder_bot" / "bot.py", "a") as fh:
        fh.write("# changed\n")
    capsys.readouterr()
    assert main(["tournament", "subs", "greedy", "--games", "1", "--db", "t.db"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "folder_bot (changed since submission)" in err[0] and "js_bot" not in err[0], err
    assert not (tmp_path / "t.db").exists()


def test_a_program_whose_threads_burn_is_stopped_between_its_turns_or_faulted() -> None:
    """threads_burn.js's workers burn CPU in every thread. Once the process used CPU between two
    turns it is stopped between them (its CPU clock stands still while it waits); past
    ``idle_cpu_seconds`` of it between two turns it is faulted ``timeout`` and killed."""
    import time

    from arena.sandbox.failures import WorkerTimeout
    from arena.sandbox.programs.process import ProgramProcess, node_runtime

    factory = program_factory(read_bot_file(HERE / "threads_burn.js"), PATIENT)

    def started(limits: Limits) -> ProgramProcess:
        proc = ProgramProcess(factory.stage, node_runtime(limits, "bot.js"), limits)
        start, cpu0 = proc.begin(2.0)
        proc.send({"type": "start_game", "seed": 1})
        assert proc.recv() == b'{"type":"ready"}'
        proc.end(start, cpu0, 2.0)
        return proc

    try:
        proc = started(dataclasses.replace(PATIENT, idle_cpu_seconds=60.0))
        time.sleep(0.2)
        start, cpu0 = proc.begin(2.0)  # it ran between turns: frozen from now on
        proc.end(start, cpu0, 2.0)
        assert proc.freezing and proc.frozen
        before = proc.cpu()
        time.sleep(0.3)
        assert proc.cpu() - before < 0.01  # stopped: its burning threads get no CPU
        proc.kill()
        proc = started(PATIENT)
        time.sleep(0.5)
        with pytest.raises(WorkerTimeout, match="between its turns"):
            proc.begin(2.0)
        assert proc.dead
    finally:
        factory.close()


def test_a_link_in_or_to_a_bot_folder_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The attack: a bot folder whose file links to the organiser's secrets (read, hashed and
    staged as the bot's), or a link planted as a bot folder: each refused, never followed."""
    from arena.cli import main

    secret = tmp_path / "secret.txt"
    secret.write_text("organiser's secret", encoding="utf-8")
    bot = folder(tmp_path, 'language = "x"\nrun = "python3 -I bot.py"\n')
    (bot / "data.txt").symlink_to(secret)
    assert main(["play", str(bot), "greedy", "--games", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "data.txt" in err[0] and "link" in err[0], err
    (bot / "data.txt").unlink()
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "linked").symlink_to(bot)
    assert main(["tournament", str(subs), "greedy", "--games", "1", "--db", str(tmp_path / "t.db")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "linked" in err[0] and "link" in err[0], err


def test_a_tournament_of_every_kind_is_re_played_the_same_from_its_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Programs beside a Python bot file in one tournament; programs are stored in the database
    as bundles (runtime and files, hashed as the bot's sha256): `arena report` re-plays each game
    from them exactly as it was played."""
    from arena.cli import main

    db = str(tmp_path / "t.db")
    kits = ROOT / "examples" / "kits"
    # (the C++ kit's games are as any program's; its build is tested by its own check below)
    bots = [str(ROOT / "examples" / "shed.js"), str(kits / "python-stdio"), str(ROOT / "examples" / "counter.py")]
    assert main(["tournament", *bots, "--games", "1", "--db", db, "-q"]) == 0
    capsys.readouterr()
    assert main(["report", "--db", db, "-o", str(tmp_path / "report")]) == 0
    err = capsys.readouterr().err
    assert "otherwise" not in err and "re-played" not in err, err


@pytest.mark.parametrize(
    "files",
    [
        [["../escape.js", "text", "x"]],
        [["/etc/passwd", "text", "x"]],
        [["a/../../b", "text", "x"]],
        [[".hidden", "text", "x"]],
        [["bot.js", "base64", "%%%"]],
        [["bot.js", "text", "x"], ["bot.js", "text", "y"]],
    ],
    ids=["dotdot", "absolute", "nested-dotdot", "hidden", "bad-base64", "repeated"],
)
def test_a_hostile_databases_bundle_is_refused_never_staged(files: list[list[str]]) -> None:
    """The attack: a database whose stored program names a file outside its stage folder (or is
    otherwise malformed): the bot is entered as one that cannot load, nothing is written."""
    import json

    from arena.errors import BotLoadError
    from arena.trust.botfolder import BUNDLE_MAGIC
    from arena.trust.botsource import stored_source

    src = stored_source("evil", BUNDLE_MAGIC + json.dumps({"runtime": "node", "files": files}))
    assert src.problem and "not a bot program's stored source" in src.problem
    with pytest.raises(BotLoadError):
        program_factory(src, PATIENT)


def test_a_python_file_posing_as_a_stored_program_is_refused(tmp_path: Path) -> None:
    """The attack: a .py whose text starts with a program bundle's header, so that a database
    would re-play it as a program: refused when read, in one line."""
    from arena.errors import BotLoadError
    from arena.trust.botfolder import BUNDLE_MAGIC

    bot = tmp_path / "poser.py"
    bot.write_text(BUNDLE_MAGIC + '{"runtime": "node", "files": [["bot.js", "text", "x"]]}\n', encoding="utf-8")
    with pytest.raises(BotLoadError, match="header of a stored program"):
        read_bot_file(bot)


def test_the_example_kits_are_the_kits_arena_new_writes() -> None:
    """examples/kits/ holds kits as `arena new --lang` writes them (arena/authoring/kits/, package data),
    with a name filled in: the copies do not drift apart."""
    package, examples = ROOT / "arena" / "authoring" / "kits", ROOT / "examples" / "kits"

    def files(root: Path) -> dict[str, bytes]:
        out = {}
        for p in sorted(root.rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts:
                data = p.read_bytes()
                if p.name == "bot.toml":  # the name is the one line arena new fills in
                    data = re.sub(rb'(?m)^name = ".*"$', b'name = "NAME"', data)
                out[p.relative_to(root).as_posix()] = data
        return out

    kits = sorted(p.name for p in examples.iterdir() if p.is_dir())
    assert kits and all((package / k).is_dir() for k in kits)
    for kit in kits:
        assert files(package / kit) == files(examples / kit), kit


def test_a_programs_process_dies_with_its_referee_even_by_kill_9(tmp_path: Path) -> None:
    """A referee killed by ``kill -9`` (a ladder worker, a tournament) took no program with it: the
    program, stopped between its turns, stayed for ever holding its memory. Now it dies with it."""
    import signal
    import subprocess
    import sys
    import time

    script = f"""
import dataclasses, sys, time
sys.path.insert(0, {str(ROOT)!r}); sys.path.insert(0, {str(Path(__file__).parent)!r})
from arena.trust.botsource import read_bot_file
from arena.sandbox.programs.process import ProgramProcess, node_runtime
from arena.sandbox.programs.runtimes import program_factory
from test_programs import PATIENT
from pathlib import Path
factory = program_factory(read_bot_file(Path({str(HERE / "threads_burn.js")!r})), PATIENT)
limits = dataclasses.replace(PATIENT, idle_cpu_seconds=600.0)
proc = ProgramProcess(factory.stage, node_runtime(limits, "bot.js"), limits)
start, cpu0 = proc.begin(2.0)
proc.send({{"type": "start_game", "seed": 1}})
assert proc.recv() == b'{{"type":"ready"}}'
proc.end(start, cpu0, 2.0)
print(proc.pid, flush=True)
time.sleep(600)
"""
    referee = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        line = referee.stdout.readline() if referee.stdout else ""
        assert line.strip().isdigit(), line
        program = int(line)
        assert Path(f"/proc/{program}").exists()
    finally:
        referee.send_signal(signal.SIGKILL)
        referee.wait()
    for _ in range(200):  # gone, however slowly the machine runs (no timing is asserted)
        try:
            state = Path(f"/proc/{program}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return
        if state == "Z":  # killed, waiting for init to reap it
            return
        time.sleep(0.1)
    os.kill(program, signal.SIGKILL)
    raise AssertionError(f"the program {program} outlived its referee (state {state})")


def test_a_program_and_a_python_bot_meet_the_same_turn_bounds() -> None:
    """``referee_turn_seconds`` and ``max_turn_actions`` mean one thing for every seat in another
    process (docs/bot-api.md "Limits", docs/protocol.md "Faults": as for a Python bot), since both
    kinds keep their bounds in one base (arena/sandbox/seat.py). The copies had drifted: past the
    referee's CPU a program was a ``crash`` where a Python bot is a ``timeout``, and the action
    bound was worded otherwise."""
    from arena.sandbox.python.factory import SandboxFactory

    def first_fault(factory: object) -> tuple[str, str]:
        greedy = load_trusted(resolve_bot("greedy"))
        players = [greedy(5, 0), factory(5, 1), greedy(5, 2)]  # type: ignore[operator]
        try:
            outcome = Referee(CONTEST).play(players, seed=5)
        finally:
            for p in players:
                p.close()
            factory.close()  # type: ignore[attr-defined]
        kinds = [(f.kind.value, f.detail) for f in outcome.faults if f.seat == 1]
        assert kinds[1][0] == "retired", kinds
        return kinds[0]

    cpu = dataclasses.replace(PATIENT, referee_turn_seconds=1e-9)
    actions = dataclasses.replace(PATIENT, max_turn_actions=1)
    shed, counter = read_bot_file(ROOT / "examples" / "shed.js"), read_bot_file(ROOT / "examples" / "counter.py")
    for make, stopped in (
        (lambda limits: program_factory(shed, limits), "program"),
        (lambda limits: SandboxFactory(counter, limits), "worker"),
    ):
        kind, detail = first_fault(make(cpu))
        assert kind == "timeout" and "of the referee's CPU in a turn" in detail, detail
        assert detail.endswith(f"; {stopped} stopped"), detail
        kind, detail = first_fault(make(actions))
        assert kind == "crash" and re.match(r"protocol violation: \d+ actions in a turn \(limit 1\)", detail), detail
