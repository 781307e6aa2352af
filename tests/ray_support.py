"""One local Ray cluster (2 CPUs) for all the Ray tests of a session, shut down after the last of them.

``ray.init`` costs 6-12 s on 2 cores, so the Ray tests share one cluster: the code under test finds
Ray connected and uses the connection as it is (``ray_connection``). The fixture is module-scoped
(imported by each Ray test module): it starts the cluster if it is not running, and at the end of a
module shuts it down unless a later test of the session uses it too, so the rest of the suite does
not run beside an idle cluster.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import ray

__all__ = ["ray_cluster", "wait_for_free_cpus"]

CPUS = 2


def _needed_later(request: pytest.FixtureRequest) -> bool:
    items = request.session.items
    last = max(i for i, item in enumerate(items) if getattr(item, "module", None) is request.module)
    return any("ray_cluster" in getattr(item, "fixturenames", ()) for item in items[last + 1 :])


@pytest.fixture(scope="module")
def ray_cluster(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The ``ray`` module, connected to a local 2-CPU cluster."""
    if not ray.is_initialized():
        ray.init(address="local", num_cpus=CPUS, include_dashboard=False, logging_level="WARNING")
    yield ray
    if not _needed_later(request):
        ray.shutdown()


def wait_for_free_cpus(seconds: float = 20.0) -> None:
    """Wait until no actor holds a CPU of the cluster (the actors of a finished or stopped run are gone)."""
    deadline = time.monotonic() + seconds
    while ray.available_resources().get("CPU", 0) < CPUS:
        if time.monotonic() > deadline:
            raise AssertionError(f"CPUs still held after {seconds:.0f} s: {ray.available_resources()}")
        time.sleep(0.2)
