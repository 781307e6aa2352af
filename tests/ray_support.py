"""One local Ray cluster (2 CPUs) per test session, shared by the Ray tests and shut down at the end.

``ray.init`` costs 6-12 s on 2 cores, so every Ray test uses this one cluster: the code under test
finds Ray connected and uses the connection as it is (``ray_connection``). The fixture is imported by
several test modules; pytest may define it once per module, so starting is idempotent and only the
fixture that started the cluster shuts it down.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import ray

__all__ = ["ray_cluster", "wait_for_free_cpus"]

CPUS = 2


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Any]:
    """The ``ray`` module, connected to a local 2-CPU cluster."""
    started = not ray.is_initialized()
    if started:
        ray.init(address="local", num_cpus=CPUS, include_dashboard=False, logging_level="WARNING")
    try:
        yield ray
    finally:
        if started:
            ray.shutdown()


def wait_for_free_cpus(seconds: float = 20.0) -> None:
    """Wait until no actor holds a CPU of the cluster (the actors of a finished or stopped run are gone)."""
    deadline = time.monotonic() + seconds
    while ray.available_resources().get("CPU", 0) < CPUS:
        if time.monotonic() > deadline:
            raise AssertionError(f"CPUs still held after {seconds:.0f} s: {ray.available_resources()}")
        time.sleep(0.2)
