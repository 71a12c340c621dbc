"""The results of a tournament: one finished-game type, one result set, standings, statistics,
separation, teams.
"""
