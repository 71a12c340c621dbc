"""Escaped: pads a request (a history request) with 200 KB in a field the referee would not read.
expect: faults=crash retired
check: billed detail=a_malformed_'hist'_message
"""
import json
import os
import struct


class Bot:
    def move(self, turn):
        payload = json.dumps(["hist", [], "x" * 200000]).encode()
        os.write(4, struct.pack(">I", len(payload)) + payload)
        os.read(3, 1)
