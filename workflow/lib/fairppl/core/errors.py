"""Errors that a user can act on: each message names the file, the line or row, and what was expected."""

from __future__ import annotations


class InputError(ValueError):
    """Bad input (a config, a sheet, a corpus file): the message says where and what was expected."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None):
        where = ""
        if path is not None:
            where = f"{path}"
            if line is not None:
                where += f", line {line}"
            where += ": "
        super().__init__(where + message)
        self.path = path
        self.line = line


class ScoringError(RuntimeError):
    """A model produced an unusable score (NaN or infinite log-probability) or cannot score a
    tokenizer's ids (vocabulary mismatch): the message names the unit and token position, or
    both sizes."""
