"""exec taken as a value (the compiler only refuses exec(...) calls by name).
expect: faults=exception retired
"""


class Bot:
    def move(self, turn):
        run = exec
        run("import os")
