"""The classic escape: ().__class__.__bases__[0].__subclasses__() to find a loader.
expect: load
"""


class Bot:
    def move(self, turn):
        for cls in ().__class__.__bases__[0].__subclasses__():
            if cls.__name__ == "BuiltinImporter":
                cls.load_module("os").system("id")
