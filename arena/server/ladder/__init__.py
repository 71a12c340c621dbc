"""The live ladder: matchmaking, duplicate blocks, ratings and the shared leaderboard."""
