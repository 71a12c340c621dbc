"""How ``arena serve`` runs a contest folder: :class:`ServerSettings`, made by the command line
(:mod:`arena.cli.serve`) and read by the app, its routes and its workers."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...trust.botsource import MAX_SOURCE_BYTES


@dataclass(frozen=True)
class ServerSettings:
    """How ``arena serve`` runs a contest folder."""

    folder: Path
    max_upload: int = MAX_SOURCE_BYTES
    uploads_per_minute: int = 10
    #: Uploads one client address may make a minute, whoever signs them (many authors behind one address).
    uploads_per_address: int = 60
    open_registration: bool = False
    check_workers: int = 2
    #: Processes running bot programs' builds (one build each; one author's at a time).
    build_workers: int = 2
    ladder_workers: int = 1
    check_games: int = 2
    #: Where the ladder's and the final's games run: "local" processes or "ray" (``--backend``).
    backend: str = "local"
    #: With backend "ray": the cluster to join (``--ray-address``); None starts a local Ray.
    ray_address: str | None = None
    #: Session cookies only over HTTPS (TLS, or behind a TLS reverse proxy).
    secure_cookies: bool = False
    #: Seconds between the live leaderboard's looks at the database.
    live_seconds: float = 0.5
    #: Live leaderboard connections at once; more are closed at once (1013, try again later).
    max_live: int = 500
    #: Live leaderboard connections from one client address at once (one client cannot take them all).
    max_live_per_address: int = 20
    #: Open tables (waiting or playing) in which one client address holds a seat, whoever signed in.
    tables_per_address: int = 4
    #: A person's seconds for one move at a table (``--table-move-seconds``).
    table_move_seconds: float = 120.0
    #: Authors one client address may register in a day (with ``open_registration``).
    registrations_per_address: int = 5
    #: Start the background workers with the app (tests of the routes alone set False).
    workers: bool = True
    #: The ladder's pace: games per bot an hour at most (0: none), the share of the time each ladder
    #: worker may be busy, each version's latest games kept whole, and the contest folder's disk
    #: budget in bytes (None: none): docs/server.md, "Running for a week".
    pace: float = 120.0
    ladder_cpu: float = 1.0
    keep_games: int = 100
    disk_budget: int | None = None
