"""The frame walk again, with getattr and names built at run time.
expect: faults=exception retired
"""


class Bot:
    def move(self, turn):
        gen = (x for x in [1])
        frame = getattr(gen, "gi_" + "frame")
        back = getattr(frame, "f_" + "back")
        turn.say(str(back))
