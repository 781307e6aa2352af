"""A bounded in-process cache that threads can share: each value is built once, the oldest go first.

``functools.lru_cache`` is safe to call from threads, but two threads that miss the same key
at the same time both build the value (for an ALFWorld game: translating its PDDL problem
twice, seconds of CPU), and its bound is a number of entries whatever their size.
:class:`MemoryCache` builds each missing key once (the other threads asking for it wait for
that build, threads asking for other keys do not wait), bounds the total *weight* of its
entries (a count, or an estimate of bytes), and evicts the least recently used ones. A failed
build is not cached: the next caller builds again (so each caller sees its own exception).

Example:
    >>> cache = MemoryCache(capacity=10, weigh=len)
    >>> cache.get("a", lambda: "x" * 6), cache.get("a", lambda: "never built")
    ('xxxxxx', 'xxxxxx')
    >>> _ = cache.get("b", lambda: "y" * 6)  # 12 > 10: "a" is evicted
    >>> "a" in cache, "b" in cache, cache.weight
    (False, True, 6)
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["MemoryCache"]

V = TypeVar("V")


class _Build:
    """One build in progress; other threads wait on it."""

    __slots__ = ("done",)

    def __init__(self) -> None:
        self.done = threading.Event()


class MemoryCache(Generic[V]):
    """A thread-safe LRU cache bounded by total weight, building each missing key once.

    Args:
        capacity: Largest total weight kept; the most recent entry is kept even if it alone exceeds it.
        weigh: Weight of a value (called once, when it is stored); 1 by default (a count bound).
    """

    def __init__(self, capacity: float, weigh: Callable[[V], float] | None = None) -> None:
        self.capacity = capacity
        self._weigh = weigh or (lambda value: 1)
        self._entries: OrderedDict[Hashable, tuple[V, float]] = OrderedDict()
        self._builds: dict[Hashable, _Build] = {}
        self._lock = threading.Lock()
        self.weight: float = 0
        """Total weight of the entries held."""
        self.hits = 0
        """Lookups answered from the cache."""
        self.misses = 0
        """Lookups that built their value."""

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._entries

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def get(self, key: Hashable, build: Callable[[], V]) -> V:
        """The value of ``key``, calling ``build()`` if it is missing (once, whatever the number of threads)."""
        while True:
            with self._lock:
                entry = self._entries.get(key)
                if entry is not None:
                    self._entries.move_to_end(key)
                    self.hits += 1
                    return entry[0]
                pending = self._builds.get(key)
                if pending is None:
                    pending = self._builds[key] = _Build()
                    break
            pending.done.wait()  # another thread builds it; look again (it may have failed)
        try:
            value = build()
            weight = self._weigh(value)
            with self._lock:
                self.misses += 1
                self._store(key, value, weight)
            return value
        finally:
            with self._lock:
                del self._builds[key]
            pending.done.set()

    def _store(self, key: Hashable, value: V, weight: float) -> None:
        old = self._entries.pop(key, None)
        if old is not None:
            self.weight -= old[1]
        self._entries[key] = (value, weight)
        self.weight += weight
        while self.weight > self.capacity and len(self._entries) > 1:
            _, (_, dropped) = self._entries.popitem(last=False)
            self.weight -= dropped

    def clear(self) -> None:
        """Forget every entry (builds in progress still store their value)."""
        with self._lock:
            self._entries.clear()
            self.weight = 0
