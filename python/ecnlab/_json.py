"""JSON holds no NaN or infinity: :func:`finite` replaces them by ``None``
(``null``) before a summary, a record or a report is written, so that every
file ecnlab writes is strict JSON that any reader takes."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["finite"]


def finite(value: Any) -> Any:
    """``value`` with every non-finite float, however deep, replaced by
    ``None``; mappings come back as dicts with string keys, sequences as
    lists, numpy scalars as Python numbers."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    if isinstance(value, np.generic):
        return finite(value.item())
    return value
