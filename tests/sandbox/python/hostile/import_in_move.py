"""Hides the forbidden import inside a method, hoping only top-level imports are checked.
expect: load
"""


class Bot:
    def move(self, turn):
        import socket
        socket.create_connection(("127.0.0.1", 22))
