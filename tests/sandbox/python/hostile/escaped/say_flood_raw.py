"""Escaped: floods says and printed output past what its turn object allows: 5,000 of each in
one reply (the worker's own say cap is in the code it escaped).
expect: faults=crash retired
check: billed detail=10000_actions_in_a_turn
"""
import json
import os
import struct


class Bot:
    def move(self, turn):
        actions = [["s", "flood"], ["o", "flood\n"]] * 5000
        payload = json.dumps(["done", actions, None], separators=(",", ":")).encode()
        os.write(4, struct.pack(">I", len(payload)) + payload)
        os.read(3, 1)
