"""Escaped: start a thread (clone with CLONE_THREAD: seccomp kills the worker, SIGSYS). A game
process can have no descendant at all, not even a thread: its CPU clock and its SIGSTOP cover
all there is of it.
expect: faults=crash retired
"""
import _thread


class Bot:
    def move(self, turn):
        _thread.start_new_thread(print, ("ESCAPED",))
        turn.say("ESCAPED started a thread")
        turn.finish()
