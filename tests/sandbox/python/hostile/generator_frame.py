"""A generator's gi_frame.f_back reaches the caller's frame and its locals.
expect: load
"""


class Bot:
    def move(self, turn):
        gen = (x for x in [1])
        frame = gen.gi_frame.f_back
        turn.say(str(frame.f_locals))
