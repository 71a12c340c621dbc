"""Seats: finding a bot by name or file, and turning bot specs into the factories that seat them at
a table.
"""
