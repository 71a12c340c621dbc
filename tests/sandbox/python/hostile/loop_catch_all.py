"""A loop that catches every exception, KeyboardInterrupt and SystemExit included.
expect: faults=timeout retired
"""


class Bot:
    def move(self, turn):
        while True:
            try:
                while True:
                    turn.finish()
            except BaseException:
                pass
