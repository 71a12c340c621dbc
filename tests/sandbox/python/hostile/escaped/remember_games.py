"""Escaped: remember earlier games of the match (its hands, so that a duplicate rotation of the
same deal would show the opponents' cards): in module globals, builtins, sys.modules, os.environ,
a file, a folder name, System V shared memory; recall them at the start of the next game.
In a stream (one process for games of different deals) the process's memory does survive: it then
guesses the current deal's hidden cards from every hand it remembers ("GUESS ..." says), which
tests/sandbox/python/test_hostile.py holds to chance.
expect: clean
"""
import builtins
import ctypes
import os
import random
import sys

PATH = ""
KEY = 0x5EED


def _shm():
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.shmget(KEY, 4096, 0o1600)  # IPC_CREAT | 0600


def recall():
    found = []
    if getattr(builtins, "ARENA_MEMORY", None):
        found.append("builtins")
    if "arena_memory" in sys.modules:
        found.append("sys.modules")
    if getattr(random, "ARENA_MEMORY", None):
        found.append("random")
    if os.environ.get("ARENA_MEMORY"):
        found.append("environ")
    for path in (PATH, "/tmp/arena-memory.txt", "arena-memory.txt", "/dev/shm/arena-memory"):
        try:
            with open(path or "/nonexistent") as f:
                found.append("file " + f.read()[:20])
        except OSError:
            pass
    try:
        if [n for n in os.listdir("/tmp") if n.startswith("arena-memory-")]:
            found.append("folder name")
    except OSError:
        pass
    try:
        if _shm() >= 0:
            found.append("shm")
    except Exception:
        pass
    return found


def guesses(hand):
    """Cards it held in earlier games (kept in the process's builtins) and does not hold now."""
    held = {str(c) for c in hand}
    return sorted({c for h in getattr(builtins, "ARENA_HANDS", []) for c in h} - held)


def store(hand):
    builtins.ARENA_HANDS = getattr(builtins, "ARENA_HANDS", []) + [[str(c) for c in hand]]
    text = " ".join(map(str, hand))
    builtins.ARENA_MEMORY = text
    sys.modules["arena_memory"] = type(sys)("arena_memory")
    random.ARENA_MEMORY = text
    os.environ["ARENA_MEMORY"] = text
    for path in (PATH, "/tmp/arena-memory.txt", "arena-memory.txt", "/dev/shm/arena-memory"):
        try:
            with open(path or "/nonexistent", "w") as f:
                f.write(text)
        except OSError:
            pass
    try:
        os.mkdir("/tmp/arena-memory-" + text.replace(" ", "_"))
    except OSError:
        pass
    try:
        _shm()
    except Exception:
        pass


class Bot:
    def __init__(self):
        self.recalled = recall()
        self.moves = 0

    def move(self, turn):
        if self.moves == 0:
            turn.say("REMEMBERED " + ", ".join(self.recalled) if self.recalled else "FORGOT everything")
            guess = guesses(turn.hand)
            for i in range(0, len(guess), 40):
                turn.say("GUESS " + " ".join(guess[i : i + 40]))
            store(turn.hand)
        elif self.moves == 1:  # within one game the same channels do work (globals at least)
            turn.say("SELFCHECK " + ", ".join(recall()))
        self.moves += 1
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
