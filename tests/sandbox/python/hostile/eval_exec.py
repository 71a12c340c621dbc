"""eval and exec of text built at run time.
expect: load
"""


class Bot:
    def move(self, turn):
        eval("__import__('os').system('id')")
