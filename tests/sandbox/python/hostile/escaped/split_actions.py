"""Escaped: spreads its no-op actions over the messages of one move, each message under the
turn's action limit: a (legal) draw request with 400 empty outputs, then its answer with 400 more.
expect: faults=crash retired
check: billed detail=801_actions_in_a_turn
"""
import json
import os
import struct


def _read(fd, n):
    data = b""
    while len(data) < n:
        chunk = os.read(fd, n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def _send(message):
    payload = json.dumps(message, separators=(",", ":")).encode()
    os.write(4, struct.pack(">I", len(payload)) + payload)


class Bot:
    def move(self, turn):
        _send(["draw", [["o", ""]] * 400])
        (size,) = struct.unpack(">I", _read(3, 4))
        _read(3, size)
        _send(["done", [["o", ""]] * 400 + [["f"]], None])
        os.read(3, 1)
