"""start_game raises every game, then plays normally.
expect: faults=exception
"""


class Bot:
    def start_game(self, game):
        raise RuntimeError("no thanks")

    def move(self, turn):
        if not turn.puttable() and turn.can_draw():
            turn.draw()
        while True:
            options = turn.puttable()
            if options:
                turn.put(options[0])
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()
            else:
                break
        turn.finish()
