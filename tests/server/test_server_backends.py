"""`arena serve` options beyond the defaults (issue 21, item 1): the ladder and the final on Ray
(`--backend ray`), HTTPS (`--ssl-certfile/--ssl-keyfile`), and the headers of a reverse proxy
believed from the proxy's own addresses only (`--forwarded-allow-ips`)."""

from __future__ import annotations

import os
import random
import shutil
import signal
import ssl
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from support.server import ARENA, ROOT, arena, free_port

from arena.cli import main
from arena.server.contest.publish import tournament_backend
from arena.server.http.auth import FAILURES_PER_MINUTE
from arena.server.ladder.matchmaker import LadderPlayer
from arena.server.store import database as store

GREEDY = (ROOT / "bots" / "greedy.py").read_text()
RANDOM = (ROOT / "bots" / "random.py").read_text()


def contest(folder: Path) -> None:
    store.init_contest(folder, "Cup")
    db = store.open_db(folder)
    try:
        author = int(store.invite(db, "ann").split(".")[0][1:])
        for name, source in (("gbot", GREEDY.replace('"greedy"', '"gbot"')), ("rbot", RANDOM)):
            store.finish_check(db, store.add_submission(db, author, name, source.encode()), {"clean": True}, None)
    finally:
        db.close()


@contextmanager
def serving(folder: Path, *extra: str, scheme: str = "http", verify: object = True) -> Iterator[str]:
    port = free_port()
    url = f"{scheme}://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [*ARENA, "serve", str(folder), "--port", str(port), "--ladder-workers", "0", "--check-workers", "0", *extra],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(url + "/api/leaderboard", verify=verify, timeout=5).status_code == 200:  # type: ignore[arg-type]
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def self_signed(folder: Path) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("no openssl command to make a certificate")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert)]
        + ["-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True,
        capture_output=True,
    )
    return cert, key


def test_https_with_a_certificate_and_secure_session_cookies(tmp_path: Path) -> None:
    folder = tmp_path / "cup"
    contest(folder)
    cert, key = self_signed(tmp_path)
    trust = ssl.create_default_context(cafile=str(cert))
    with serving(folder, "--ssl-certfile", str(cert), "--ssl-keyfile", str(key), scheme="https", verify=trust) as url:
        answer = httpx.get(url + "/api/leaderboard", verify=trust)
        assert answer.status_code == 200 and [b["bot"] for b in answer.json()["bots"]] == ["gbot", "rbot"]
        login = httpx.get(url + "/login", verify=trust)
        assert "secure" in login.headers["set-cookie"].lower()  # the session never travels in clear
        with pytest.raises(httpx.HTTPError):  # plain HTTP on the TLS port gets no page
            httpx.get(url.replace("https://", "http://") + "/api/leaderboard", timeout=5)


def test_tls_files_that_cannot_serve_are_one_line_each(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "cup"
    contest(folder)
    cert, key = self_signed(tmp_path)
    other_cert, _ = self_signed(tmp_path / "other") if (tmp_path / "other").mkdir() is None else (None, None)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    cases = [
        (["--ssl-certfile", str(cert)], "needs both"),
        (["--ssl-keyfile", str(key)], "needs both"),
        (["--ssl-certfile", str(tmp_path / "none.pem"), "--ssl-keyfile", str(key)], "none.pem"),
        (["--ssl-certfile", str(cert), "--ssl-keyfile", str(fifo)], "fifo"),  # would block a plain read
        (["--ssl-certfile", str(cert), "--ssl-keyfile", str(cert)], "not a certificate and its key"),
        (["--ssl-certfile", str(other_cert), "--ssl-keyfile", str(key)], "not a certificate and its key"),
    ]
    for extra, needle in cases:
        code = main(["serve", str(folder), "--port", str(free_port()), *extra])  # refused before it serves
        err = capsys.readouterr().err
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and needle in lines[0] and "Traceback" not in err, (extra, err)


def bad_tokens(url: str, forwarded: list[str], source: str = "127.0.0.1") -> list[int]:
    """Wrong tokens sent from the local address ``source``, each naming a client in X-Forwarded-For."""
    with httpx.Client(transport=httpx.HTTPTransport(local_address=source)) as client:
        return [
            client.get(
                url + "/api/submissions/1", headers={"Authorization": "Bearer a1.wrong", "X-Forwarded-For": f}
            ).status_code
            for f in forwarded
        ]


def test_forwarded_headers_are_believed_from_the_listed_proxy_only(tmp_path: Path) -> None:
    folder = tmp_path / "cup"
    contest(folder)
    n = FAILURES_PER_MINUTE
    with serving(folder, "--forwarded-allow-ips", "127.0.0.1") as url:  # the proxy is 127.0.0.1
        # the attack: a client that is not the proxy (127.0.0.2) names a new address on every guess
        seen = bad_tokens(url, [f"198.51.100.{i}" for i in range(n + 1)], source="127.0.0.2")
        assert seen[:n] == [401] * n and seen[n] == 429
        # the proxy's word is believed: one client's guesses do not lock the others out
        seen = bad_tokens(url, ["203.0.113.5"] * (n + 1) + ["203.0.113.6"])
        assert seen[:n] == [401] * n and seen[n] == 429 and seen[n + 1] == 401
        assert "secure" in httpx.get(url + "/login").headers["set-cookie"].lower()


def test_backend_ray_without_ray_is_one_line(tmp_path: Path) -> None:
    fake = tmp_path / "fake"
    (fake / "ray").mkdir(parents=True)
    (fake / "ray" / "__init__.py").write_text("raise ImportError('no ray here')\n")
    folder = tmp_path / "cup"
    contest(folder)
    done = arena("serve", str(folder), "--backend", "ray", env={"PYTHONPATH": str(fake)}, timeout=60)
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        "arena: error: the ray backend needs Ray: pip install 'yard-bridge-arena[ray]'"
    ], done.stderr


def test_the_final_runs_on_the_servers_backend() -> None:
    assert tournament_backend("ray", 3) == ["--backend", "ray", "--workers", "3"]
    assert tournament_backend("local", 3) == ["--workers", "1"]
    assert tournament_backend("ray", 3, "head:6379") == [
        "--backend",
        "ray",
        "--workers",
        "3",
        "--ray-address",
        "head:6379",
    ]
    assert tournament_backend("local", 3, "head:6379") == ["--workers", "1"]


def test_a_ray_address_reaches_the_ladder_and_the_final(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.server.contest import publish
    from arena.server.http.settings import ServerSettings
    from arena.server.ladder import ray_tasks as rayladder
    from arena.server.workers import processes as worker
    from arena.server.workers.supervisor import Supervisor

    spawned: list[list[str]] = []
    monkeypatch.setattr(subprocess, "Popen", lambda cmd, **kw: spawned.append(cmd))
    Supervisor(tmp_path, 0, 2, 2, "ray", "ray://head:10001")._spawn("ladder")
    publish.start(
        tmp_path, 2, ServerSettings(tmp_path, ladder_workers=2, backend="ray", ray_address="ray://head:10001")
    )
    publish.start(
        tmp_path, 1, ServerSettings(tmp_path, ladder_workers=2, backend="local", ray_address="ray://head:10001")
    )
    for cmd in spawned[:2]:
        assert cmd[cmd.index("--backend") + 1] == "ray" and cmd[cmd.index("--ray-address") + 1] == "ray://head:10001"
    assert "--ray-address" not in spawned[2] and "--backend" not in spawned[2]
    seen: list[object] = []
    monkeypatch.setattr(rayladder, "run", lambda *args: seen.append(args[-1]))
    monkeypatch.setattr(worker, "alive", lambda parent: False)
    monkeypatch.setattr(os, "nice", lambda n: 0)  # the worker's own settings, not this test process's
    monkeypatch.setattr(signal, "signal", lambda *args: None)
    folder = tmp_path / "cup"
    contest(folder)
    assert worker.main(["ladder", str(folder), "--backend", "ray", "--ray-address", "auto", "--parent", "1"]) == 0
    assert seen == ["auto"]


def test_a_ray_address_is_checked_before_serving(tmp_path: Path) -> None:
    folder = tmp_path / "cup"
    contest(folder)
    alone = arena("serve", str(folder), "--ray-address", "auto", timeout=60)
    assert alone.returncode == 2 and alone.stderr.strip() == "arena: error: --ray-address goes with --backend ray"
    port = free_port()  # nothing listens there
    done = arena("serve", str(folder), "--backend", "ray", "--ray-address", f"127.0.0.1:{port}", timeout=60)
    lines = done.stderr.strip().splitlines()
    assert (
        done.returncode == 2
        and len(lines) == 1
        and lines[0].startswith(f"arena: error: cannot reach the Ray cluster at 127.0.0.1:{port}")
    ), done.stderr


@pytest.mark.long
def test_ladder_blocks_play_on_ray_and_are_stored_as_local_ones(tmp_path: Path, ray_session: None) -> None:
    from arena.server.ladder import ray_tasks as rayladder

    folder = tmp_path / "cup"
    contest(folder)
    db = store.open_db(folder)
    player = LadderPlayer(db)
    try:
        rayladder.run(player, random.Random(3), 2, lambda: store.games_count(db) < 6, 0.1)
        rows = db.execute("SELECT key, block, rotation, places FROM games ORDER BY block, rotation").fetchall()
        assert len(rows) >= 6
        blocks: dict[int, list[int]] = {}
        for r in rows:
            assert r["key"] == f"b{r['block']}-r{r['rotation']}"
            blocks.setdefault(r["block"], []).append(r["rotation"])
        assert all(rot == [0, 1] for rot in blocks.values())  # whole blocks: both rotations of each
        games = {int(r["submission"]): int(r["games"]) for r in db.execute("SELECT * FROM ratings")}
        assert games[1] == games[2] == len(rows)  # rated once per game
    finally:
        player.close()
        db.close()


def test_limits_per_address_are_options_and_refuse_nonsense(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "cup"
    contest(folder)
    for option in ("--live-per-address", "--uploads-per-address"):
        for value in ("0", "-3", "many"):
            with pytest.raises(SystemExit) as exited:  # refused by the parser, before anything starts
                main(["serve", str(folder), "--port", str(free_port()), option, value])
            code, err = exited.value.code, capsys.readouterr().err
            assert code == 2 and len(err.strip().splitlines()) == 1 and option in err, (option, value, err)
