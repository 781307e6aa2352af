"""Batched, seeded generation for the ``hf:PATH`` agent, and the batcher that groups concurrent episodes' turns.

:func:`generate` runs one batch: the conversations are left-padded, prefilled together (rows with the
same prompt and nothing cached once: a GRPO group's first turn) and extended token by token with a
key/value cache that has room for the replies (a token is written into it, not concatenated to a copy
of it: ``agents/_hf_kv.py``); logits are computed for the last position only. Every row samples from
its own :class:`torch.Generator` seeded with the request's seed (:func:`row_seed` of the episode seed
and the turn), after its own temperature / top-k / top-p filtering, so a row's tokens do not depend
on the other rows of the batch: the same episode seed gives the same reply whether it is generated
alone or with others (the tests check a batch of 4 against 4 single generations). ``temperature=0`` is greedy.

A row ends at an end-of-sequence token (kept in its ids, as TRL keeps it) or after
``max_new_tokens``. A conversation longer than the model's context minus ``max_new_tokens`` keeps
its last tokens (``context_cut`` says how many were dropped).

:class:`Batcher` serves the episodes of one event loop that share a model: each
:meth:`~Batcher.generate` call queues a request; a server task waits until the other ready episodes
have queued theirs (the event loop goes idle), then generates up to ``batch_size`` requests in one
batch in a worker thread, so the episodes' env steps run while the model works.

Example::

    local = load_local_model("runs/train-bm/final")
    [reply] = generate(local, [GenerationRequest(ids, seed=row_seed(7, 0), sampling=Sampling())])
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentgym_budget.agents._hf_kv import PrefixCache, cache_of, layer_tensors, reserved_cache
from agentgym_budget.agents.hf_model import LocalModel
from agentgym_budget.errors import InvalidOptionError

__all__ = ["Generation", "Sampling", "generate"]


def row_seed(seed: int, index: int) -> int:
    """A 63-bit seed for generation ``index`` of the episode seeded with ``seed`` (stable across runs and platforms).

    Example:
        >>> row_seed(7, 0) == row_seed(7, 0) != row_seed(7, 1)
        True
    """
    digest = hashlib.sha256(f"hf-agent|{int(seed)}|{int(index)}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


@dataclass(frozen=True)
class Sampling:
    """How a reply is sampled.

    Attributes:
        temperature: Softmax temperature; 0 is greedy.
        top_p: Nucleus mass in (0, 1] (1: off).
        top_k: Keep the ``top_k`` most likely tokens (0: off).
        max_new_tokens: Longest reply in tokens.

    Raises:
        InvalidOptionError: A value is out of range.

    Example:
        >>> Sampling(top_p=0)
        Traceback (most recent call last):
        ...
        agentgym_budget.errors.InvalidOptionError: Sampling: need temperature >= 0, 0 < top_p <= 1, top_k >= 0 and max_new_tokens >= 1; got temperature=1.0, top_p=0, top_k=0, max_new_tokens=128.
    """

    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    max_new_tokens: int = 128

    def __post_init__(self) -> None:
        if not (self.temperature >= 0 and 0 < self.top_p <= 1 and self.top_k >= 0 and self.max_new_tokens >= 1):
            raise InvalidOptionError(
                "Sampling: need temperature >= 0, 0 < top_p <= 1, top_k >= 0 and max_new_tokens >= 1; got "
                f"temperature={self.temperature}, top_p={self.top_p}, top_k={self.top_k}, "
                f"max_new_tokens={self.max_new_tokens}."
            )


@dataclass(frozen=True)
class GenerationRequest:
    """One reply to generate: the conversation's token ids, the row's seed and its sampling.

    ``cache`` (optional) is the episode's :class:`PrefixCache`: read when it covers a prefix of ``ids``, then
    replaced by the keys / values of this turn (the row's own, whatever else is in the batch).
    """

    ids: tuple[int, ...]
    seed: int
    sampling: Sampling
    cache: PrefixCache | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Generation:
    """One generated reply.

    Attributes:
        ids: The reply's token ids (its end-of-sequence token included when it has one).
        ended: The reply ended with an end-of-sequence token (else it hit ``max_new_tokens``).
        prompt_tokens: Tokens the model read (after any cut).
        context_cut: Tokens dropped from the start of the conversation to fit the context.
        cached_tokens: Prompt tokens read from the request's :class:`PrefixCache` instead of computed again.
    """

    ids: tuple[int, ...]
    ended: bool
    prompt_tokens: int
    context_cut: int
    cached_tokens: int = 0


def _pick(torch: Any, logits: Any, sampling: Sampling, generator: Any) -> int:
    if sampling.temperature == 0:
        return int(torch.argmax(logits))
    logits = logits / sampling.temperature
    if 0 < sampling.top_k < logits.numel():
        kth = torch.topk(logits, sampling.top_k).values[-1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = torch.softmax(logits, dim=-1)
    if sampling.top_p < 1:
        ordered, order = torch.sort(probs, descending=True)
        outside = torch.cumsum(ordered, dim=-1) - ordered > sampling.top_p
        probs = probs.clone()
        probs[order[outside]] = 0.0
    return int(torch.multinomial(probs, 1, generator=generator))


def _prompts(local: LocalModel, requests: Sequence[GenerationRequest]) -> tuple[list[list[int]], list[int], list[int]]:
    """Per request: the ids the model reads (after any cut), the tokens cut, the tokens its cache covers."""
    prompts, cuts, reused = [], [], []
    for request in requests:
        keep = max(1, local.context - request.sampling.max_new_tokens)
        ids = list(request.ids)
        cuts.append(max(0, len(ids) - keep))
        prompts.append(ids[-keep:])
        usable = request.cache is not None and cuts[-1] == 0
        reused.append(request.cache.reusable(ids) if usable else 0)
    return prompts, cuts, reused


def _distinct(prompts: list[list[int]], reused: list[int]) -> tuple[list[int], list[int]]:
    """The rows to prefill (one of each prompt read whole, e.g. a GRPO group's first turn) and, for every row,
    the index of its prefilled row."""
    first: dict[tuple[int, ...], int] = {}
    unique: list[int] = []
    source: list[int] = []
    for row, (ids, r) in enumerate(zip(prompts, reused, strict=True)):
        key = tuple(ids) if r == 0 else None
        if key is not None and key in first:
            source.append(first[key])
            continue
        if key is not None:
            first[key] = len(unique)
        source.append(len(unique))
        unique.append(row)
    return unique, source


def _prefill(local: LocalModel, requests: Sequence[GenerationRequest], prompts: list[list[int]], reused: list[int]):
    """The first forward pass: each row's cached keys / values right-aligned in ``C`` columns, its unread suffix
    right-aligned in ``S`` more; returns ``(output, attention mask, positions)``. Logits of the last position only."""
    import torch

    cached, width = max(reused), max(len(ids) - r for ids, r in zip(prompts, reused, strict=True))
    rows = len(prompts)
    input_ids = torch.full((rows, width), local.pad_id, dtype=torch.long)
    mask = torch.zeros((rows, cached + width), dtype=torch.long)
    positions = torch.zeros((rows, width), dtype=torch.long)
    for row, (ids, r) in enumerate(zip(prompts, reused, strict=True)):
        suffix = ids[r:]
        input_ids[row, width - len(suffix) :] = torch.tensor(suffix, dtype=torch.long)
        positions[row, width - len(suffix) :] = torch.arange(r, len(ids))
        mask[row, cached - r : cached] = 1
        mask[row, cached + width - len(suffix) :] = 1
    extra: dict[str, Any] = {}
    if cached:
        from transformers import DynamicCache

        cache = DynamicCache(config=local.model.config)
        first = next(request.cache.layers for request, r in zip(requests, reused, strict=True) if r)
        for layer, (keys, values) in enumerate(first):
            padded = [torch.zeros((rows, *t.shape[1:2], cached, t.shape[3]), dtype=t.dtype) for t in (keys, values)]
            for row, (request, r) in enumerate(zip(requests, reused, strict=True)):
                if r:
                    for tensor, stored in zip(padded, request.cache.layers[layer], strict=True):
                        tensor[row, :, cached - r :] = stored[0, :, :r]
            cache.update(padded[0], padded[1], layer)
        extra[_cache_arg(local)] = cache
    if "logits_to_keep" in inspect.signature(local.model.forward).parameters:
        extra["logits_to_keep"] = 1
    out = local.model(input_ids=input_ids, attention_mask=mask, position_ids=positions, use_cache=True, **extra)
    return out, mask, positions


def _cache_arg(local: LocalModel) -> str:
    return "cache" if "cache" in inspect.signature(local.model.forward).parameters else "past_key_values"


def _keep_caches(requests, prompts, cuts, replies, mask, fed: int, cache: Any) -> None:
    """Store in each request's :class:`PrefixCache` the keys / values of what its row read: its prompt and the
    reply tokens fed back (all but a last one the loop stopped at)."""
    import torch

    layers = None
    for row, request in enumerate(requests):
        if request.cache is None:
            continue
        if cuts[row]:  # positions restart after a cut: the next turn cannot reuse them
            request.cache.ids, request.cache.layers = (), ()
            continue
        layers = layer_tensors(cache) if layers is None else layers
        kept = min(len(replies[row]), fed)
        read = mask.shape[1]
        index = torch.cat([torch.nonzero(mask[row]).flatten(), torch.arange(read, read + kept)])
        request.cache.ids = (*prompts[row], *replies[row][:kept])
        request.cache.layers = tuple((k[row : row + 1, :, index], v[row : row + 1, :, index]) for k, v in layers)


def _sample(local: LocalModel, requests, logits: Any, generators: list[Any], replies, ended: list[bool]) -> list[int]:
    """One token per row (the pad token for rows already done), appended to ``replies``."""
    import torch

    step = []
    for row, request in enumerate(requests):
        active = not ended[row] and len(replies[row]) < request.sampling.max_new_tokens
        token = _pick(torch, logits[row], request.sampling, generators[row]) if active else local.pad_id
        if active:
            replies[row].append(token)
            ended[row] = token in local.eos_ids
        step.append(token)
    return step


def generate(local: LocalModel, requests: Sequence[GenerationRequest]) -> list[Generation]:
    """Generate one reply per request in one batch (see the module docstring).

    Rows with the same prompt and no cache to reuse are prefilled once; the batch's keys / values get room for
    the replies up front, so a generated token is written into the cache, not concatenated to a copy of it.
    """
    import torch

    if not requests:
        return []
    prompts, cuts, reused = _prompts(local, requests)
    generators = [torch.Generator().manual_seed(request.seed) for request in requests]
    replies: list[list[int]] = [[] for _ in requests]
    ended = [False] * len(requests)
    limit = max(request.sampling.max_new_tokens for request in requests)
    fed = 0
    with torch.inference_mode():
        unique, source = _distinct(prompts, reused)
        out, prompt_mask, positions = _prefill(
            local, [requests[i] for i in unique], [prompts[i] for i in unique], [reused[i] for i in unique]
        )
        index = torch.tensor(source, dtype=torch.long)
        prompt_mask, positions = prompt_mask[index], positions[index]
        logits = out.logits[:, -1, :].float()[index]
        cache = reserved_cache(cache_of(out), source, limit)
        read = prompt_mask.shape[1]
        mask = torch.zeros((len(requests), read + limit), dtype=torch.long)
        mask[:, :read] = prompt_mask
        for _ in range(limit):
            step = _sample(local, requests, logits, generators, replies, ended)
            if all(ended[r] or len(replies[r]) >= q.sampling.max_new_tokens for r, q in enumerate(requests)):
                break
            mask[:, read + fed] = 1
            positions = positions[:, -1:] + 1
            out = local.model(
                input_ids=torch.tensor(step, dtype=torch.long)[:, None],
                attention_mask=mask[:, : read + fed + 1],
                position_ids=positions,
                use_cache=True,
                **{_cache_arg(local): cache},
            )
            fed += 1
            logits = out.logits[:, -1, :].float()
        _keep_caches(requests, prompts, cuts, replies, prompt_mask, fed, cache)
    return [
        Generation(tuple(reply), done, len(prompt), cut, r)
        for reply, done, prompt, cut, r in zip(replies, ended, prompts, cuts, reused, strict=True)
    ]


class Batcher:
    """Groups the generation requests of one event loop's episodes into batches (see the module docstring).

    Args:
        local: The shared model.
        batch_size: Most requests generated in one batch.
    """

    def __init__(self, local: LocalModel, batch_size: int) -> None:
        self.local = local
        self.batch_size = int(batch_size)
        self.batches = 0
        self._pending: list[tuple[GenerationRequest, asyncio.Future[Generation]]] = []
        self._server: asyncio.Task[None] | None = None

    async def generate(self, request: GenerationRequest) -> Generation:
        """Queue ``request`` and return its reply once its batch is generated."""
        future: asyncio.Future[Generation] = asyncio.get_running_loop().create_future()
        self._pending.append((request, future))
        if self._server is None or self._server.done():
            self._server = asyncio.ensure_future(self._serve())
        return await future

    async def _settle(self) -> None:
        quiet = 0
        while len(self._pending) < self.batch_size and quiet < 2:
            count = len(self._pending)
            await asyncio.sleep(0)
            quiet = quiet + 1 if len(self._pending) == count else 0

    async def _serve(self) -> None:
        while self._pending:
            await self._settle()
            batch = self._pending[: self.batch_size]
            del self._pending[: self.batch_size]
            batch = [(request, future) for request, future in batch if not future.cancelled()]
            if not batch:
                continue
            try:
                replies = await asyncio.to_thread(generate, self.local, [request for request, _ in batch])
            except Exception as err:  # every waiting episode gets the error, none hangs
                for _, future in batch:
                    if not future.done():
                        future.set_exception(err)
                continue
            self.batches += 1
            for (_, future), reply in zip(batch, replies, strict=True):
                if not future.done():
                    future.set_result(reply)


_BATCHERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[int, int], Batcher]] = (
    weakref.WeakKeyDictionary()
)


def batcher_for(local: LocalModel, batch_size: int) -> Batcher:
    """The running loop's batcher for ``local`` and ``batch_size`` (one per loop, so episodes of a loop share it)."""
    loop = asyncio.get_running_loop()
    batchers = _BATCHERS.setdefault(loop, {})
    key = (id(local), int(batch_size))
    if key not in batchers:
        batchers[key] = Batcher(local, batch_size)
    return batchers[key]
