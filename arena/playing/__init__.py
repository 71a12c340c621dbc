"""Playing games: ``arena play`` matches, the human seat at the terminal, SPRT, Ctrl-C handling."""
