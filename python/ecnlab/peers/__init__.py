"""Other simulators' files, read and written: runs made elsewhere brought to
ecnlab (``ecnlab import-hpcc``), and ecnlab's results written in the other
simulator's formats so that both can be compared side by side."""

from __future__ import annotations

from .hpcc import HpccImport, import_hpcc
from .hpcc_fct import compare_fct, format_compare, read_fct, write_fct

__all__ = ["HpccImport", "compare_fct", "format_compare", "import_hpcc", "read_fct", "write_fct"]
