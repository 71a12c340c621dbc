"""The game itself (docs/rules.md): cards, the rules in force, moves, the engine, events, what each
seat sees (R10), seeds, and the referee that runs one game.
"""
