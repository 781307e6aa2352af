"""The Text space of every environment, made safe for ``AsyncVectorEnv(shared_memory=True)``.

Gymnasium's :class:`~gymnasium.spaces.Text` has two problems in asynchronous vector envs with shared
memory (the default of ``gym.make_vec(..., vectorization_mode="async")``):

* it reads the shared buffer into a tuple of strings *once*, when the vector env is created, so every
  later ``reset`` / ``step`` returns that stale tuple (strings of the first character of the charset);
* characters are stored as indices into the charset in iteration order, and a ``frozenset`` charset
  iterates in an order that depends on the process's string-hash seed, so a worker started with
  ``spawn`` or ``forkserver`` may encode with another order than the parent decodes with.

:class:`TextSpace` fixes both: its charset is kept in sorted order (the same in every process), and
its shared-memory reads return a :class:`SharedTextView`, a live view that decodes the buffer when
read (as Gymnasium's numpy views of Box spaces are live). With ``copy=True`` (the default) the vector
env deep-copies it into a plain tuple of strings, exactly what ``shared_memory=False`` returns.

Example:
    >>> space = TextSpace(max_length=8, min_length=0, charset="ba ")
    >>> space.character_list
    (' ', 'a', 'b')
    >>> from gymnasium.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory
    >>> memory = create_shared_memory(space, n=2)
    >>> view = read_from_shared_memory(space, memory, n=2)
    >>> write_to_shared_memory(space, 0, "", memory); write_to_shared_memory(space, 1, "ab a", memory)
    >>> view[1], tuple(view)
    ('ab a', ('', 'ab a'))
    >>> write_to_shared_memory(space, 1, "b", memory)  # the view is live
    >>> view == ("", "b")
    True
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import read_from_shared_memory

__all__ = ["TextSpace"]


class TextSpace(spaces.Text):
    """A :class:`gymnasium.spaces.Text` with a sorted charset and live shared-memory reads (see the module docstring).

    Takes the same arguments as :class:`gymnasium.spaces.Text`.
    """

    def __init__(
        self, max_length: int, *, min_length: int = 1, charset: Iterable[str] | str | None = None, seed: Any = None
    ) -> None:
        if charset is not None:
            charset = "".join(sorted(set(charset)))
        super().__init__(max_length, min_length=min_length, charset=charset, seed=seed)


class SharedTextView(Sequence[str]):
    """A live, read-only view of the texts of ``n`` sub-envs in shared memory.

    Indexing and iteration decode the buffer as it is now; ``copy.deepcopy`` returns a tuple of
    strings (a snapshot); ``==`` compares with any sequence of strings.
    """

    def __init__(self, space: TextSpace, shared_memory: Any, n: int) -> None:
        self._space = space
        self._data = np.frombuffer(shared_memory.get_obj(), dtype=np.int32).reshape((n, space.max_length))
        self._pad = len(space.character_set)
        characters = "".join(space.character_list)
        self._ascii = np.frombuffer(characters.encode("ascii"), dtype=np.uint8) if characters.isascii() else None

    def _decode(self, values: np.ndarray) -> str:
        padding = np.flatnonzero(values >= self._pad)
        values = values[: padding[0]] if padding.size else values
        if self._ascii is not None:
            return self._ascii[values].tobytes().decode("ascii")
        return "".join(self._space.character_list[v] for v in values)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return tuple(self._decode(row) for row in self._data[index])
        return self._decode(self._data[index])

    def __len__(self) -> int:
        return len(self._data)

    def __iter__(self) -> Iterator[str]:
        return (self._decode(row) for row in self._data)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return tuple(self) == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        raise TypeError("SharedTextView is mutable (a view of shared memory); copy it first.")

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return tuple(self)

    def __copy__(self) -> tuple[str, ...]:
        return tuple(self)

    def __repr__(self) -> str:
        return f"SharedTextView({tuple(self)!r})"


@read_from_shared_memory.register(TextSpace)
def _read_text_view(space: TextSpace, shared_memory: Any, n: int = 1) -> SharedTextView:
    return SharedTextView(space, shared_memory, n)
