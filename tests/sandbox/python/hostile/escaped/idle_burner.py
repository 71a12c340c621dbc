"""Escaped: burn CPU while it is not its turn, to slow the other seats: an interval timer whose
signal handler spins, outside move(), for as long as no message from the referee is waiting
(its turn has not come). Frozen between its turns, it runs only once a message is there: it burns nothing.
expect: clean
"""
import os
import select
import signal
import time


def _inputs():
    found = []
    for fd in range(3, 12):
        try:
            os.fstat(fd)
        except OSError:
            continue
        found.append(fd)
    return found


FDS = _inputs()
IN_MOVE = [False]


def my_turn():
    try:
        return bool(select.select(FDS, [], [], 0)[0])
    except (OSError, ValueError):
        return True


def spin(signum, frame):
    # at most 2 ms (of CPU, and of real time) per 4 ms tick: it never starves its own moves
    end, wall = time.process_time() + 0.002, time.monotonic() + 0.002
    while time.process_time() < end and time.monotonic() < wall and not IN_MOVE[0] and not my_turn():
        pass


class Bot:
    def __init__(self):
        signal.signal(signal.SIGALRM, spin)
        signal.setitimer(signal.ITIMER_REAL, 0.004, 0.004)

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
