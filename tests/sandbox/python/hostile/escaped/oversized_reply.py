"""Escaped: writes a frame header announcing 4 GB onto the protocol pipe.
expect: faults=crash retired
"""
import os


class Bot:
    def move(self, turn):
        for fd in (3, 4, 5):
            try:
                os.write(fd, b"\xff\xff\xff\xff")
            except OSError:
                pass
        while True:
            pass
