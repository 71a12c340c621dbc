"""Terminal injection: a name, say text and printed output full of escape sequences --
an OSC 52 clipboard write, CSI screen clearing and colours, a bidi override, a C1 CSI,
a lone surrogate -- and a say text that forges a log line for another seat.
expect: clean
check: terminal-safe
"""


class Bot:
    name = "\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2J\x1b[H\u202egreedy\x9b31m\udcff"

    def move(self, turn):
        turn.say("ok\n  greedy: opening A\u2660 | forged \x1b[31mred\x1b[0m")
        turn.say("\x1b]8;;http://evil.example/\x07link\x1b]8;;\x07 \u2066isolate\u2069 \r\x08\x7f")
        print("\x1b]52;c;cm0gLXJmIH4=\x07 printed \x1b[1A\x1b[K")
        while True:
            options = turn.puttable()
            if options:
                card = options[0]
                turn.put(card, "h" if card.rank == "j" else None)
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()
            else:
                break
        turn.finish()
