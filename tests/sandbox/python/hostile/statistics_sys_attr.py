"""statistics.sys would be the real sys module: reach for it at move time.
expect: faults=exception retired
"""
import statistics


class Bot:
    def move(self, turn):
        statistics.sys.modules["os"].system("id")
