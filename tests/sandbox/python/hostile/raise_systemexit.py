"""raise SystemExit from move: must not end the worker.
expect: faults=exception retired
"""


class Bot:
    def move(self, turn):
        raise SystemExit(0)
