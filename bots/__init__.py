"""Reference bots of the arena. Each file is a plain bot (docs/bot-api.md)."""
