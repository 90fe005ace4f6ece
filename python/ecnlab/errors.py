"""Exceptions raised by the Python side of ecnlab."""

from __future__ import annotations

from typing import Any

__all__ = ["ConfigError", "EngineNotBuiltError", "RunInterrupted"]


class ConfigError(ValueError):
    """A configuration problem: a bad file, override or value.

    Raised both for problems found in Python (unreadable TOML, malformed
    ``--set`` overrides) and for those the engine reports while validating a
    config; the engine's own exception is re-raised as this class with its
    message unchanged, so ``except ecnlab.ConfigError`` catches every case.
    """


class EngineNotBuiltError(ImportError):
    """The compiled engine module ``ecnlab._engine`` cannot be imported."""


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a run before its end.

    ``result`` is the :class:`ecnlab.Result` of what the run did up to then:
    its files (when it had an output directory) are whole and readable, and
    its summary says ``"complete": false``.
    """

    def __init__(self, result: Any) -> None:
        super().__init__("run interrupted")
        self.result = result
