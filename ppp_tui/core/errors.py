"""Typed errors of the scoring core.

Every error the core raises for bad input is a `PPPError`, so each face (the CLI,
the terminal app) can catch one type and show its message as a single line.
"""

import sys


def too_many_digits(error: ValueError) -> str | None:
    """What a parser's ValueError for an integer past Python's digit limit means, in
    words (None for any other ValueError, which is a bug to raise again)."""
    if "digits" not in str(error):
        return None
    return f"a number of more than {sys.get_int_max_str_digits()} digits"


class PPPError(ValueError):
    """Bad input to ppp-tui: the message is one line a user can act on."""


class WeightError(PPPError):
    """A weight pair outside [0, 1] or not summing to 1.0."""


class RunError(PPPError):
    """A run that breaks the input contract, located by its JSON path."""

    def __init__(self, message: str, path: str = "") -> None:
        self.path = path
        super().__init__(f"{path}: {message}" if path else message)


class ConfigError(PPPError):
    """A config.toml that cannot be read, does not validate, or cannot be saved safely."""
