"""Escaped: burn CPU while it is not its turn, to slow the other seats: an interval timer whose
signal handler spins whenever the bot is not inside move(). Frozen between its turns, it can
only spin on its own turn, on its own CPU time.
expect: clean
"""
import signal
import time

IN_MOVE = [False]


def spin(signum, frame):
    end = time.process_time() + 0.002
    while not IN_MOVE[0] and time.process_time() < end:
        pass


class Bot:
    def __init__(self):
        signal.signal(signal.SIGALRM, spin)
        signal.setitimer(signal.ITIMER_REAL, 0.005, 0.005)

    def move(self, turn):
        IN_MOVE[0] = True
        try:
            if not turn.puttable() and turn.can_draw():
                turn.draw()
            while True:
                options = turn.puttable()
                if options:
                    turn.put(options[0], "h" if options[0].rank == "j" else None)
                elif not turn.can_finish() and turn.can_draw():
                    turn.draw()
                else:
                    break
            turn.finish()
        finally:
            IN_MOVE[0] = False
