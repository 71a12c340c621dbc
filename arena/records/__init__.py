"""Game records (docs/record-format.md): writing and reading JSON Lines, and the shape every line
is checked against on the way in.
"""
