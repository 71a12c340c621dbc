"""``arena serve DIR``: the contest's site, API and ladder, under uvicorn. Ctrl-C stops it cleanly."""

from __future__ import annotations

import argparse
import errno
import socket
import sys
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..trust.text import escape
from .options import check_ray_backend, positive


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from ..server.http.app import create_app
    from ..server.http.settings import ServerSettings
    from ..server.http.transport import limits
    from ..server.store import database as store

    for name in ("ladder_workers", "check_workers", "build_workers"):
        if not 0 <= getattr(args, name) <= 64:
            raise UsageError(f"--{name.replace('_', '-')} takes 0 to 64")
    if not 1 <= args.uploads_per_minute <= 10_000:
        raise UsageError("--uploads-per-minute takes 1 to 10000")
    if not 1 <= args.check_games <= 100:
        raise UsageError("--check-games takes 1 to 100")
    if not 1 <= args.table_move_seconds <= 3600:
        raise UsageError("--table-move-seconds takes 1 to 3600")
    if not 1 <= args.port <= 65535:
        raise UsageError("--port takes 1 to 65535")
    if not 0 <= args.pace <= 1_000_000:
        raise UsageError("--pace takes 0 (no pace) to 1000000 games per bot an hour")
    if not 1 <= args.ladder_cpu <= 100:
        raise UsageError("--ladder-cpu takes 1 to 100 (percent of the time a ladder worker may be busy)")
    if not 1 <= args.keep_games <= 1_000_000:
        raise UsageError("--keep-games takes 1 to 1000000")
    budget = disk_budget(args.disk_budget)
    check_ray_backend(args.backend, args.ray_address)  # the ladder's worker would only say so in its log
    tls = tls_options(args)
    settings = ServerSettings(
        folder=Path(args.dir),
        open_registration=args.open_registration,
        ladder_workers=args.ladder_workers,
        check_workers=args.check_workers,
        build_workers=args.build_workers,
        check_games=args.check_games,
        uploads_per_minute=args.uploads_per_minute,
        uploads_per_address=args.uploads_per_address,
        max_live_per_address=args.live_per_address,
        tables_per_address=args.tables_per_address,
        table_move_seconds=float(args.table_move_seconds),
        registrations_per_address=args.registrations_per_address,
        backend=args.backend,
        ray_address=args.ray_address,
        secure_cookies=bool(tls) or args.forwarded_allow_ips is not None,
        pace=args.pace,
        ladder_cpu=args.ladder_cpu / 100,
        keep_games=args.keep_games,
        disk_budget=budget,
    )
    try:
        app = create_app(settings)
    except store.ContestError as exc:
        raise UsageError(str(exc)) from None
    sockets = listening(args.host, args.port)  # before saying "serving": a busy port is one line
    where = f"{'https' if tls else 'http'}://{args.host}:{args.port}/"
    print(f"arena: serving {escape(args.dir)} on {where} (Ctrl-C stops)", file=sys.stderr, flush=True)
    config = uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        log_level="warning",
        ws="websockets-sansio",
        proxy_headers=args.forwarded_allow_ips is not None,
        forwarded_allow_ips=args.forwarded_allow_ips or "",
        server_header=False,
        ssl_certfile=tls.get("ssl_certfile"),
        ssl_keyfile=tls.get("ssl_keyfile"),
        **limits(),  # bounded request heads, a deadline on each request, bounded websocket messages
    )
    server = uvicorn.Server(config)
    from ..sandbox.programs.buildcache import forbid_builds

    try:
        with forbid_builds("a contest's builds run in its build queue"):  # a table's programs come built
            server.run(sockets=sockets)
    finally:
        for sock in sockets:
            sock.close()
    if not server.started:
        raise UsageError(f"the server on {escape(args.host, 200)}:{args.port} did not start (its log says why)")
    return 0


#: The smallest ``--disk-budget``: the database's reserve for its WAL and blocks in play, and room.
MIN_BUDGET = 3_000_000


def disk_budget(text: str | None) -> int | None:
    """``--disk-budget``'s bytes (None: no budget). :raises UsageError: not a size, or too small."""
    from ..server.ladder.retention import parse_size

    if text is None:
        return None
    size = parse_size(text)
    if size is None:
        raise UsageError(f"--disk-budget {escape(text, 40)}: not a size (say 500M, 20G or 1.5GiB)")
    if size < MIN_BUDGET:
        raise UsageError(f"--disk-budget {escape(text, 40)}: at least 3M (the ladder keeps 1.75 MiB free to write in)")
    return size


def listening(host: str, port: int) -> list[socket.socket]:
    """Listening sockets on every address ``host`` names (as uvicorn would bind them), made before
    anything says "serving" or starts a worker; uvicorn serves on them.

    :raises UsageError: the port is in use, needs privileges, or ``host`` is no address of this machine.
    """
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        why = escape(getattr(exc, "strerror", None) or exc, 200)
        raise UsageError(f"--host {escape(host, 200)}: no address of this machine ({why})") from None
    addresses = list(dict.fromkeys((family, address) for family, _, _, _, address in found))
    sockets: list[socket.socket] = []
    try:
        for family, address in addresses:
            sock = socket.socket(family, socket.SOCK_STREAM)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:  # as asyncio binds: each family its own socket
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen(128)  # listening now: no other server can take the port meanwhile
    except OSError as exc:
        for sock in sockets:
            sock.close()
        raise UsageError(cannot_listen(host, port, exc)) from None
    return sockets


def cannot_listen(host: str, port: int, exc: OSError) -> str:
    """Why ``arena serve`` cannot listen on ``host``:``port``, and what to do, in one line."""
    shown = escape(host, 200)
    if exc.errno == errno.EADDRINUSE:
        return f"port {port} is in use on {shown} (another server listens there: stop it, or choose another --port)"
    if exc.errno == errno.EADDRNOTAVAIL:
        return f"--host {shown} is not an address of this machine"
    if exc.errno == errno.EACCES:
        return f"port {port} on {shown} needs privileges this user lacks (choose --port 1024 or above)"
    return f"cannot listen on {shown} port {port}: {escape(exc.strerror or exc, 200)}"


def tls_options(args: argparse.Namespace) -> dict[str, str]:
    """uvicorn's TLS options, the certificate and key loaded once first, so that a missing,
    unreadable or mismatched file is one line here rather than a traceback from uvicorn.

    :raises UsageError: one of the two options without the other, or files TLS cannot use.
    """
    if args.ssl_certfile is None and args.ssl_keyfile is None:
        return {}
    if args.ssl_certfile is None or args.ssl_keyfile is None:
        raise UsageError("TLS needs both --ssl-certfile and --ssl-keyfile")
    import ssl

    from ..trust.files import NotRegularFile, regular

    for path in (args.ssl_certfile, args.ssl_keyfile):
        try:
            regular(path)  # a FIFO or device would block the load below
        except NotRegularFile as exc:
            raise UsageError(str(exc)) from None
        except OSError as exc:
            raise UsageError(f"{escape(path)}: {exc.strerror or exc}") from None
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(args.ssl_certfile, args.ssl_keyfile)
    except (ssl.SSLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or getattr(exc, "strerror", None) or exc
        raise UsageError(
            f"--ssl-certfile {escape(args.ssl_certfile)} / --ssl-keyfile {escape(args.ssl_keyfile)}: "
            f"not a certificate and its key ({escape(reason, 200)})"
        ) from None
    return {"ssl_certfile": args.ssl_certfile, "ssl_keyfile": args.ssl_keyfile}


def register(sub: Any) -> None:
    p = sub.add_parser(
        "serve",
        help="run a contest's site, API and ladder",
        description="Serve the contest folder DIR: upload pages and API, check queue, ladder.",
    )
    p.add_argument("dir", metavar="DIR")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--ladder-workers", type=int, default=1, metavar="N", help="ladder processes (default 1)")
    p.add_argument(
        "--check-workers",
        type=int,
        default=2,
        metavar="N",
        help="check processes (default 2; one author's upload at a time each: a slow check holds one)",
    )
    p.add_argument(
        "--build-workers",
        type=int,
        default=2,
        metavar="N",
        help="processes running bot programs' builds, once per uploaded version (default 2; one author's at a time)",
    )
    p.add_argument(
        "--pace",
        type=float,
        default=120.0,
        metavar="N",
        help="the most ladder games each bot plays an hour, on average; fewer as ratings settle "
        "(default 120; 0: no pace)",
    )
    p.add_argument(
        "--ladder-cpu",
        type=float,
        default=100.0,
        metavar="PERCENT",
        help="the share of the time each ladder worker may be busy (default 100)",
    )
    p.add_argument(
        "--keep-games",
        type=int,
        default=100,
        metavar="N",
        help="each version's latest N ladder games kept whole; older ones keep only their results (default 100)",
    )
    p.add_argument(
        "--disk-budget",
        metavar="SIZE",
        help="the most the contest folder may hold (500M, 20G, 1.5GiB); the ladder stops short of it",
    )
    p.add_argument(
        "--check-games",
        type=int,
        default=2,
        metavar="N",
        help="smoke games per table size in each upload's check (default 2, as arena check)",
    )
    p.add_argument(
        "--uploads-per-minute",
        type=int,
        default=10,
        metavar="N",
        help="uploads an author may make a minute before the server answers 429 (default 10)",
    )
    p.add_argument(
        "--uploads-per-address",
        type=positive,
        default=60,
        metavar="N",
        help="uploads one client address may make a minute, whoever signs them (default 60)",
    )
    p.add_argument(
        "--live-per-address",
        type=positive,
        default=20,
        metavar="N",
        help="live leaderboard pages one client address may hold open (default 20)",
    )
    p.add_argument(
        "--tables-per-address",
        type=positive,
        default=4,
        metavar="N",
        help="open tables in which one client address may hold seats, whoever signs in from it (default 4)",
    )
    p.add_argument(
        "--table-move-seconds",
        type=positive,
        default=120,
        metavar="SECONDS",
        help="a person's time for one move at a table; past it the fallback moves for them (default 120)",
    )
    p.add_argument(
        "--registrations-per-address",
        type=positive,
        default=5,
        metavar="N",
        help="authors one client address may register a day, with --open-registration (default 5)",
    )
    p.add_argument("--open-registration", action="store_true", help="authors may register themselves")
    p.add_argument(
        "--backend",
        choices=("local", "ray"),
        default="local",
        help="where the ladder's and the final's games run: local processes (default) or Ray, a local instance "
        "unless --ray-address (pip install 'yard-bridge-arena[ray]')",
    )
    p.add_argument(
        "--ray-address",
        metavar="ADDRESS",
        help="with --backend ray: the Ray cluster the ladder and the final join (HOST:PORT, ray://HOST:PORT or auto)",
    )
    p.add_argument("--ssl-certfile", metavar="FILE", help="serve HTTPS with this certificate (PEM; with --ssl-keyfile)")
    p.add_argument("--ssl-keyfile", metavar="FILE", help="the certificate's private key (PEM)")
    p.add_argument(
        "--forwarded-allow-ips",
        metavar="IPS",
        help="behind a reverse proxy: the proxy's addresses (comma-separated), whose X-Forwarded-For and "
        "X-Forwarded-Proto headers are believed (client addresses for the rate limits, https links)",
    )
    p.set_defaults(func=run)
