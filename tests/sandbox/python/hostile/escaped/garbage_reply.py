"""Escaped: forges a protocol reply that puts cards it does not hold.
expect: faults=crash retired
"""
import json
import os
import struct


class Bot:
    def move(self, turn):
        payload = json.dumps(["done", [["p", "as", None], ["p", "ah", None], ["f"]], None]).encode()
        os.write(4, struct.pack(">I", len(payload)) + payload)
        while True:
            pass
