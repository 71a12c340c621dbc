"""Escaped: a reply nested 100,000 lists deep, to overflow the referee's decoder.
expect: faults=crash retired
check: billed detail=nested_too_deep
"""
import os
import struct


class Bot:
    def move(self, turn):
        body = b"[" * 100000 + b"]" * 100000
        os.write(4, struct.pack(">I", len(body)) + body)
        os.read(3, 1)
