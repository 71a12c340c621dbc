"""Reference bots of the arena. Each file is a plain bot (BOT_API.md)."""
