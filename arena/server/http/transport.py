"""The connection-level limits ``arena serve`` gives uvicorn: what a client can hold before the app sees a
request. uvicorn's default HTTP parser (httptools) keeps every header byte a client sends and, on a
header of hundreds of megabytes, stalls the whole event loop for tens of seconds; a client that sends
its request a byte at a time keeps its connection (and a file descriptor) for ever. Here:

- the request head (request line and headers) is parsed by h11 and bounded to :data:`HEAD_BYTES`
  (a JSON 400 past it, or for a head h11 cannot parse, and the connection closed);
- each request must arrive whole (head and body) within :data:`REQUEST_SECONDS` of the connection or of
  the previous answer, else the connection is closed (slowloris);
- a websocket message from a client is bounded to :data:`WS_MESSAGE_BYTES` (the live pages send
  nothing; a bigger frame closes the socket with 1009).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

#: Bytes of a request's line and headers (h11's own default is 16 KiB).
HEAD_BYTES = 32 * 1024
#: Seconds a client has to send a whole request (head and body).
REQUEST_SECONDS = 30.0
#: Bytes of one websocket message a client may send.
WS_MESSAGE_BYTES = 64 * 1024


class DeadlineH11(H11Protocol):
    """uvicorn's h11 protocol, with a deadline on each request's arrival (:data:`REQUEST_SECONDS`)."""

    seconds = REQUEST_SECONDS
    _deadline: asyncio.TimerHandle | None = None

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.seconds, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _arriving(self) -> bool:
        """A request is on its way: its head or body not all here, on a connection still ours (not
        handed to a websocket)."""
        ours = getattr(self.transport, "get_protocol", lambda: self)() is self
        return ours and self.conn.their_state in (h11.IDLE, h11.SEND_BODY) and not self.transport.is_closing()

    def _too_slow(self) -> None:
        self._deadline = None
        if self._arriving():
            self.transport.close()  # the app (if it got the head) sees a disconnect; nothing was stored

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if not self._arriving():  # whole, or taken over by a websocket
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()

    def send_400_response(self, msg: str) -> None:
        """A request h11 cannot parse (a head past :data:`HEAD_BYTES`, a malformed line) is a JSON 400
        like every other refusal (uvicorn's own is plain text)."""
        body = json.dumps({"error": f"{msg[:200]} (a request line and headers take at most {HEAD_BYTES} bytes)"})
        headers = [(b"content-type", b"application/json"), (b"connection", b"close")]
        try:
            for event in (
                h11.Response(status_code=400, headers=headers),
                h11.Data(data=body.encode()),
                h11.EndOfMessage(),
            ):
                self.transport.write(self.conn.send(event))
        except h11.LocalProtocolError:  # h11 cannot answer in the state the request left it: close
            pass
        self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)


def limits() -> dict[str, Any]:
    """The ``uvicorn.Config`` keywords of these limits."""
    return {"http": DeadlineH11, "h11_max_incomplete_event_size": HEAD_BYTES, "ws_max_size": WS_MESSAGE_BYTES}
