"""Where a tournament's games are played: one scheduled game, local worker processes, Ray tasks."""
