"""Exceptions raised by the Python side of ecnlab."""

from __future__ import annotations

__all__ = ["ConfigError", "EngineNotBuiltError"]


class ConfigError(ValueError):
    """A configuration problem: a bad file, override or value.

    Raised both for problems found in Python (unreadable TOML, malformed
    ``--set`` overrides) and for those the engine reports while validating a
    config; the engine's own exception is re-raised as this class with its
    message unchanged, so ``except ecnlab.ConfigError`` catches every case.
    """


class EngineNotBuiltError(ImportError):
    """The compiled engine module ``ecnlab._engine`` cannot be imported."""
