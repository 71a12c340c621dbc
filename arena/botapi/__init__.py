"""The bot API (docs/bot-api.md): the ``turn`` a bot gets, what its code may import, and the
forward model a search bot samples and plays.
"""
