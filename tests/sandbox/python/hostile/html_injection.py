"""Plays legal moves, with a name and say lines that are markup meant to run in the
replay viewer and the report (`</script>` to end the data element, an onerror handler,
a comment opener). They must stay text there (tests/web/test_web_browser.py).
expect: clean
"""


class Bot:
    name = "</script><b onclick=x>bold"

    def move(self, turn):
        turn.say('</script><script>window.pwned = 1</script><img src=x onerror="window.pwned = 2"> <!--')
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
