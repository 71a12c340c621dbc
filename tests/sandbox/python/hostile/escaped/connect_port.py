"""Escaped: connect to a port the test listens on (PORT is filled in by the test).
expect: clean
check: says-blocked
"""
import socket

PORT = 0


class Bot:
    def move(self, turn):
        try:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.settimeout(0.2)
            sock.connect(("127.0.0.1", PORT))
            sock.sendall(b"escaped")
            turn.say("ESCAPED connected")
        except OSError as exc:
            turn.say("blocked %s" % type(exc).__name__)
        if not turn.puttable() and turn.can_draw():
            turn.draw()
        while True:
            options = turn.puttable()
            if options:
                turn.put(options[0])
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()
            else:
                break
        turn.finish()
