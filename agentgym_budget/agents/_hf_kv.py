"""Key/value caches of the ``hf:PATH`` agent's generation: an episode's cache kept between its turns, and a batch's
cache preallocated for the tokens it is about to generate.

:class:`PrefixCache` holds the keys / values of one episode's conversation so far, so its next reply reads only
the tokens added since. :func:`reserved_cache` copies the rows of a prefilled batch into buffers with room for
the reply: each generated token is written in place, where ``transformers``' ``DynamicCache`` concatenates the
whole cache again at every token of every layer (a copy that grows with the conversation). Its rows may repeat
a row of the prefill: rows with the same prompt (a GRPO group's members before their first reply) are
prefilled once.

Example:
    >>> PrefixCache((1, 2, 3), ((None, None),)).reusable([1, 2, 3, 4])
    3
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["PrefixCache", "cache_of", "layer_tensors", "reserved_cache"]


@dataclass
class PrefixCache:
    """The keys / values of an episode's conversation so far, reused by its next reply (prefix caching).

    A conversation only grows (each turn appends the reply and the tool's answer), so the next reply
    needs the model to read only the new tokens. :func:`~agentgym_budget.agents.hf_generation.generate`
    fills it; an episode keeps one.

    Attributes:
        ids: The tokens it covers.
        layers: One ``(keys, values)`` pair per layer, each ``[1, heads, len(ids), head_dim]``.

    Example:
        >>> PrefixCache((1, 2, 3), ((None, None),)).reusable([1, 2, 3, 4]), PrefixCache((1, 2, 9)).reusable([1, 2, 3])
        (3, 0)
    """

    ids: tuple[int, ...] = ()
    layers: tuple[tuple[Any, Any], ...] = ()

    def reusable(self, ids: Sequence[int]) -> int:
        """Leading tokens of ``ids`` it covers (0 unless it covers a prefix; at least one token is left to read)."""
        covered = min(len(self.ids), len(ids) - 1)
        if not self.layers or covered < len(self.ids) or tuple(ids[:covered]) != self.ids:
            return 0
        return covered


def cache_of(output: Any) -> Any:
    """The cache a ``transformers`` forward pass returned (``cache`` or, before 5.x, ``past_key_values``)."""
    cache = getattr(output, "cache", None)
    return cache if cache is not None else output.past_key_values


def layer_tensors(cache: Any) -> list[tuple[Any, Any]]:
    """``(keys, values)`` of every layer of a ``transformers`` cache (``[batch, heads, length, dim]`` each)."""
    if hasattr(cache, "layers"):
        return [(layer.keys, layer.values) for layer in cache.layers]
    return list(zip(cache.key_cache, cache.value_cache, strict=True))  # transformers < 4.56


_GROWING: list[type] = []


def _growing_layer() -> type:
    """A ``DynamicLayer`` whose keys / values are views of preallocated buffers (defined once transformers is in)."""
    if _GROWING:
        return _GROWING[0]
    import torch
    from transformers.cache_utils import DynamicLayer

    class GrowingLayer(DynamicLayer):
        def __init__(self, keys: Any, values: Any, length: int) -> None:
            super().__init__()
            self.buffers, self.length = (keys, values), length
            self.device, self.is_initialized = keys.device, True
            self.keys, self.values = keys[:, :, :length], values[:, :, :length]

        def update(self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
            end = self.length + key_states.shape[-2]
            if end > self.buffers[0].shape[-2]:  # out of room (not expected: the room is reserved): double it
                grown = []
                for old in self.buffers:
                    batch, heads, size, dim = old.shape
                    grown.append(torch.empty((batch, heads, max(end, 2 * size), dim), dtype=old.dtype))
                    grown[-1][:, :, : self.length] = old[:, :, : self.length]
                self.buffers = tuple(grown)
            self.buffers[0][:, :, self.length : end] = key_states
            self.buffers[1][:, :, self.length : end] = value_states
            self.length = end
            self.keys, self.values = self.buffers[0][:, :, :end], self.buffers[1][:, :, :end]
            return self.keys, self.values

    _GROWING.append(GrowingLayer)
    return GrowingLayer


def reserved_cache(cache: Any, rows: Sequence[int], room: int) -> Any:
    """A cache whose row ``i`` is row ``rows[i]`` of ``cache``, with ``room`` more positions preallocated per layer.

    A cache whose layers are not plain ``DynamicLayer`` s (sliding windows...) is only indexed by ``rows``.
    """
    import torch
    from transformers.cache_utils import DynamicLayer

    index = torch.tensor(list(rows), dtype=torch.long)
    plain = hasattr(cache, "layers") and all(
        type(layer) is DynamicLayer and layer.keys is not None for layer in cache.layers
    )
    if not plain:
        cache.batch_select_indices(index)
        return cache
    growing = _growing_layer()
    for number, layer in enumerate(cache.layers):
        filled = []
        for tensor in (layer.keys, layer.values):
            _, heads, length, dim = tensor.shape
            buffer = torch.empty((len(rows), heads, length + room, dim), dtype=tensor.dtype, device=tensor.device)
            for row, source in enumerate(rows):
                buffer[row, :, :length] = tensor[source]
            filled.append(buffer)
        cache.layers[number] = growing(*filled, length)
    return cache
