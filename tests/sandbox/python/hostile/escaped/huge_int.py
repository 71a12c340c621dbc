"""Escaped: a reply holding integers of 200,000 digits (quadratic to read) as its error field.
expect: faults=crash retired
check: billed detail=an_integer_too_long
"""
import os
import struct


class Bot:
    def move(self, turn):
        body = b'["done",[],' + b"7" * 200000 + b"]"
        os.write(4, struct.pack(">I", len(body)) + body)
        os.read(3, 1)
