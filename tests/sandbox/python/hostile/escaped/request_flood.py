"""Escaped: asks the referee for the whole public history again and again within one
move (a round trip the worker makes at most once a game), to make the referee
rebuild and resend it on its own CPU, which no bot limit counts; then plays on.
expect: faults=crash retired
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


class Bot:
    def move(self, turn):
        for kind in ["hist", "pile"] * 100:
            payload = json.dumps([kind, []]).encode()
            os.write(4, struct.pack(">I", len(payload)) + payload)
            (size,) = struct.unpack(">I", _read(3, 4))
            _read(3, size)
        while True:
            options = turn.puttable()
            if options:
                turn.put(options[0])
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()
            else:
                break
        turn.finish()
