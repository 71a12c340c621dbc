"""An exception's __traceback__.tb_frame leads to the caller's globals.
expect: load
"""


class Bot:
    def move(self, turn):
        try:
            turn.finish()
        except Exception as exc:
            turn.say(str(exc.__traceback__.tb_frame.f_globals))
