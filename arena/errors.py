"""Errors a bot or a tool may see."""

from __future__ import annotations


class IllegalMove(ValueError):
    """An action the rules do not allow now. ``rule`` is the rule it breaks (``"R4.3"``).

    Nothing changes at the table when it is raised; the bot may go on.
    """

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"{rule}: {message}")
        self.rule = rule
        self.reason = message


class BotLoadError(Exception):
    """A bot file cannot be loaded (syntax, forbidden name, no ``Bot`` class...).

    ``line`` is the 1-based source line when known, ``column`` the 1-based column in it.
    """

    def __init__(
        self, message: str, *, path: str | None = None, line: int | None = None, column: int | None = None
    ) -> None:
        self.path = path
        self.line = line
        self.column = column if line else None
        self.message = message
        where = path or "bot"
        if line:
            where += f":{line}" + (f":{column}" if column else "")
        super().__init__(f"{where}: {message}")


class UsageError(Exception):
    """Bad input from the command line (a flag, a file, a setting): printed as
    one line, exit status 2. Library code raises it; only the CLI prints it."""
