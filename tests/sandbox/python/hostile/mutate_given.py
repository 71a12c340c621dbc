"""Tries to change everything it is given: hand, history, players, rules, cards, classes.
Says "MUTATED <what>" for each change that went through.
expect: clean
check: no-mutation
"""
from arena import Card


class Bot:
    def attempt(self, turn, what, fn):
        try:
            fn()
        except Exception:
            return
        turn.say("MUTATED " + what)

    def move(self, turn):
        hand = turn.hand
        events = turn.history
        players = turn.players

        def rules_limit():
            turn.rules.limit = 1

        def points():
            turn.rules.points["a"] = 0

        def history_event():
            events[0]["event"] = "x"

        def history_nested():
            events[0]["players"][0]["name"] = "x"

        def player_cards():
            players[0].cards = 0

        def card_rank():
            turn.top.rank = "a"

        def card_class():
            Card.points = 0

        def turn_attr():
            turn.first = True

        def turn_method():
            turn.puttable = None

        def set_hand():
            setattr(turn, "hand", [])

        self.attempt(turn, "hand", lambda: hand.append(Card("as")))
        self.attempt(turn, "rules.limit", rules_limit)
        self.attempt(turn, "points", points)
        self.attempt(turn, "history", history_event)
        self.attempt(turn, "history nested", history_nested)
        self.attempt(turn, "players", player_cards)
        self.attempt(turn, "card", card_rank)
        self.attempt(turn, "Card class", card_class)
        self.attempt(turn, "turn attr", turn_attr)
        self.attempt(turn, "turn method", turn_method)
        self.attempt(turn, "setattr hand", set_hand)
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
