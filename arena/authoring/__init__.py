"""The bot author's commands: ``arena new`` templates and kits, ``arena check``'s smoke games and
report.
"""
