"""`ecnlab testbed`: an experiment on real Linux TCP, hosts in network
namespaces, one switch process running the engine's queue disciplines."""

from __future__ import annotations

from .netns import TestbedUnavailable, cleanup
from .plan import MAX_HOSTS, MAX_RATE_BPS, make_plan
from .run import run_testbed

__all__ = ["MAX_HOSTS", "MAX_RATE_BPS", "TestbedUnavailable", "cleanup", "make_plan", "run_testbed"]
