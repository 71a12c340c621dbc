"""The tournament's results database and its guards: writing, reading, rows checked on the way in,
the replays folder.
"""
