"""ABCMeta.register writes into the registry of a shared abstract class: register Card as a
UserDict (then isinstance(card, Mapping) is true in the worker), by attribute, by getattr and
through an abstract subclass of the bot's own. Says "MUTATED <how>" for each that went through.
expect: clean
check: no-mutation
"""
import collections
import statistics
from arena import Card


class Own(collections.UserDict):
    pass


class Bot:
    def attempt(self, turn, what, fn):
        try:
            fn()
        except Exception:
            pass
        if isinstance(turn.top, collections.UserDict) or isinstance(turn.top, collections.UserList):
            turn.say("MUTATED " + what)

    def move(self, turn):
        self.attempt(turn, "UserDict.register", lambda: collections.UserDict.register(Card))
        self.attempt(turn, "getattr register", lambda: getattr(collections.UserList, "regi" + "ster")(Card))
        self.attempt(turn, "Own.register", lambda: Own.register(Card))
        self.attempt(turn, "Fraction.register", lambda: statistics.Fraction.register(Card))
        self.attempt(turn, "ChainMap.register", lambda: collections.ChainMap.register(Card))
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
