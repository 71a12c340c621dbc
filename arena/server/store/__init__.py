"""The contest database: one SQLite file (WAL) and its schema upgrades."""
