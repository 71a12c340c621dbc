"""Reads the public history for other seats' faults and says what it saw of each:
"SAW <seat> <kind> -", or "LEAK <seat> <detail>" when a detail reached it.
Paired with fault_faulter.py in tests/sandbox/python/test_hostile_secrets.py.
"""


class Bot:
    def start_game(self, info):
        self.seen = 0

    def move(self, turn):
        history = turn.history
        for event in history[self.seen:]:
            if event["event"] == "fault":
                if "detail" in event:
                    turn.say("LEAK %s %s" % (event["seat"], event["detail"]))
                else:
                    turn.say("SAW %s %s -" % (event["seat"], event["kind"]))
            elif event["event"] == "say" and event.get("output"):
                turn.say("LEAK output %s" % event["text"][:50])
        self.seen = len(history)
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
