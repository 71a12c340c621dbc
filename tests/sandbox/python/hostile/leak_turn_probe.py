"""Probes everything the turn hands out for hidden state (other hands, the stock, the seed).
Says "LEAK <how>" when it finds any; plays like greedy otherwise.
expect: clean
check: no-leak
"""


class Bot:
    def move(self, turn):
        found = []
        for name in ("_move", "_table", "_said", "game", "hands", "stock_cards", "seed", "rng"):
            try:
                getattr(turn, name)
                found.append("turn." + name)
            except Exception:
                pass
        for event in turn.history:
            kind = event["event"]
            if kind == "deal":
                if not isinstance(event["hands"][0], int) or not isinstance(event["stock"], int):
                    found.append("deal cards")
            if kind in ("draw", "penalty") and "card" in event:
                if event["seat"] != turn.seat:
                    found.append("drawn card of seat %d" % event["seat"])
                else:
                    found.append("drawn card in history")
            if kind == "reshuffle" and not isinstance(event["stock"], int):
                found.append("reshuffled stock")
            if kind == "game" and "seed" in event:
                found.append("seed")
        for info in turn.players:
            if not isinstance(info.cards, int):
                found.append("other hand")
        for thing in (turn.rules, turn.top, turn.hand):
            for name in ("game", "engine", "hands", "stock"):
                if hasattr(thing, name):
                    found.append("attribute " + name)
        for how in found:
            turn.say("LEAK " + how)
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
