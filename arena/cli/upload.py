"""``arena submit BOT --server URL``: upload to a contest server, wait for its check, print the report."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..trust.text import escape


def upload(args: argparse.Namespace, path: Path, data: bytes, name: str | None = None) -> int:
    """Send ``data`` (a Python bot file's bytes, or a program's bundle named ``name``) and wait for its check."""
    import httpx

    token = args.token or os.environ.get("ARENA_TOKEN", "")
    if not token:
        raise UsageError("--server needs your author token: --token T or the ARENA_TOKEN environment variable")
    url = args.server.rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"--server {escape(url, 100)}: give a URL like http://127.0.0.1:8000")
    headers = {"Authorization": f"Bearer {token}"}
    try:
        with httpx.Client(base_url=url, headers=headers, timeout=30.0) as client:
            filename = path.name if name is None else f"{name}.js" if path.suffix == ".js" else name
            sent = client.post("/api/submissions", files={"bot": (filename, data, "application/octet-stream")})
            answer = _json(sent)
            same = sent.status_code == 200 and answer.get("identical") is True
            if sent.status_code != 202 and not same:
                return refuse(f"the server answered {sent.status_code}: {answer.get('error', '')}")
            sid = answer.get("id")
            if type(sid) is not int:
                return refuse("the server's answer names no submission")
            if same:  # the bytes of a version uploaded before: that version, no new one (ruling 145)
                print(f"{escape(path)}: {escape(answer.get('message'), 200)}; its check:")
            else:
                print(f"uploaded {escape(path)} as submission {sid}; waiting for its check")
            deadline = time.monotonic() + args.wait
            while True:
                got = client.get(f"/api/submissions/{sid}")
                view = _json(got)
                if got.status_code != 200:
                    return refuse(f"the server answered {got.status_code}: {view.get('error', '')}")
                if view.get("status") in ("clean", "failed"):
                    break
                if time.monotonic() > deadline:
                    return refuse(f"no check report after {args.wait:g} s (submission {sid} is {view.get('status')})")
                time.sleep(0.5)
    except httpx.HTTPError as exc:
        raise UsageError(f"{escape(url, 100)}: {escape(exc, 200) or type(exc).__name__}") from None
    report(view)
    if view["status"] == "failed":
        return refuse(str(view.get("error") or "the check failed"))
    return 0


def refuse(message: str) -> int:
    """As ``arena submit --to`` refuses: one line, exit status 1."""
    print(f"arena: error: submission refused: {escape(message, 600)}", file=sys.stderr)
    return 1


def _json(response: Any) -> dict[str, Any]:
    try:
        data = response.json()
    except ValueError:
        return {"error": "not a JSON answer (is this an arena server?)"}
    return data if isinstance(data, dict) else {}


def report(view: dict[str, Any]) -> None:
    """The check report as the server sent it, for a terminal, as ``arena check`` shows its own
    (:func:`arena.authoring.check.report_lines`: faults grouped, every text escaped)."""
    from ..authoring.check import report_lines

    rep = view.get("report")
    print(f"{escape(view.get('bot'), 60)} v{escape(view.get('version'), 20)}: check {escape(view.get('status'), 20)}")
    for line in report_lines(rep if isinstance(rep, dict) else {}):
        print(line)
    if view.get("status") == "clean":
        print(f"{escape(view.get('bot'), 60)}: clean{'; active on the ladder' if view.get('active') else ''}")
