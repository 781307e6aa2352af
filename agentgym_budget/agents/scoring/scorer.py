"""Scoring candidate commands: each candidate's token log-probs given a prompt, for many prompts in few passes.

:func:`score` takes :class:`ScoreRequest` s (a prompt's ids, the candidates' ids, and optionally the
episode's :class:`PromptState`) and returns each candidate's token log-probs:

* **shared prompt**: a prompt is read once per turn and every candidate attends to its keys / values
  (:mod:`~agentgym_budget.agents.scoring.packing`: one packed row per prompt);
* **append-only**: a request whose state covers a prefix of its prompt reads only the tokens added since;
  the state is then replaced by the keys / values of the whole prompt (the next turn's prefix);
* **shared states**: requests with the same prompt and candidates (agents of a group at the same state) are
  scored once; their states all receive the same tensors;
* **bounded passes**: a pass holds at most ``batch_size`` candidates; a prompt's first ``batch_size``
  candidates are read with it, further ones in more passes over its keys / values.

With ``capture=k`` the hidden states entering block ``k`` are kept (the prompt's in the state, the
candidates' in the result): training recomputes only the blocks from ``k`` on
(:mod:`agentgym_budget.train.scoring`).

Example::

    state = PromptState()
    [scored] = score(model, [ScoreRequest(tuple(prompt_ids), (take_ids, go_ids), state)], pad_id=0)
    scored.token_logprobs  # ((-0.3, -0.1, -0.01), (-2.1, -0.02, -0.2))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentgym_budget.agents._hf_kv import PrefixCache
from agentgym_budget.agents.scoring.packing import DecoderParts, PackedRow, packed_forward

__all__: list[str] = []

DEFAULT_BATCH = 64
"""Most candidates scored in one forward pass."""


@dataclass
class PromptState(PrefixCache):
    """An episode's prompt so far: its ids, keys / values per block and (when captured) hidden states.

    Attributes:
        hidden: Hidden states entering the capture block, one row per prompt token (``None`` when not captured).
    """

    hidden: Any = None


@dataclass(frozen=True)
class ScoreRequest:
    """One prompt and its candidates.

    Attributes:
        ids: The prompt's token ids.
        candidates: Each candidate's token ids (at least one token each).
        state: The episode's :class:`PromptState`: read when it covers a prefix of ``ids``, then replaced.
    """

    ids: tuple[int, ...]
    candidates: tuple[tuple[int, ...], ...]
    state: PromptState | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Scored:
    """The candidates' scores of one request.

    Attributes:
        token_logprobs: Per candidate, the log-prob of each of its tokens given the prompt and its earlier tokens.
        prompt_tokens: Tokens of the prompt.
        cached_tokens: Prompt tokens read from the state instead of computed again.
        candidate_hidden: Per candidate, the hidden states entering the capture block (``[tokens, width]``).
    """

    token_logprobs: tuple[tuple[float, ...], ...]
    prompt_tokens: int
    cached_tokens: int
    candidate_hidden: tuple[Any, ...] | None = None


@dataclass
class _Unique:
    ids: tuple[int, ...]
    candidates: tuple[tuple[int, ...], ...]
    source: PromptState | None
    reused: int
    logprobs: list[Any] = field(default_factory=list)
    hidden: list[Any] = field(default_factory=list)
    layers: Any = None
    last: Any = None
    prompt_hidden: Any = None


def _passes(rows: list[tuple[Any, PackedRow]], batch_size: int) -> list[list[tuple[Any, PackedRow]]]:
    """Consecutive rows grouped so that a pass holds at most ``batch_size`` candidates (at least one row)."""
    passes: list[list[tuple[Any, PackedRow]]] = []
    count = batch_size
    for item in rows:
        size = len(item[1].blocks)
        if count + size > batch_size:
            passes.append([])
            count = 0
        passes[-1].append(item)
        count += size
    return passes


def _unique(requests: Sequence[ScoreRequest], capture: int | None) -> tuple[list[_Unique], list[int]]:
    found: dict[tuple[Any, Any], int] = {}
    uniques: list[_Unique] = []
    index = []
    for request in requests:
        key = (request.ids, request.candidates)
        if key not in found:
            found[key] = len(uniques)
            uniques.append(_Unique(request.ids, request.candidates, None, 0))
        unique = uniques[found[key]]
        state = request.state
        usable = state is not None and (capture is None or state.hidden is not None)
        if unique.reused == 0 and usable and state.reusable(request.ids):
            unique.source, unique.reused = state, state.reusable(request.ids)
        index.append(found[key])
    return uniques, index


def _first_passes(
    parts: DecoderParts, uniques: list[_Unique], pad_id: int, batch_size: int, capture: int | None
) -> None:
    rows = [
        (u, PackedRow(u.reused, u.ids[u.reused :], [(len(u.ids), c) for c in u.candidates[:batch_size]]))
        for u in uniques
    ]
    for group in _passes(rows, batch_size):
        past = [u.source.layers if u.reused else None for u, _ in group]
        result = packed_forward(
            parts, [row for _, row in group], pad_id=pad_id, past=past, keep_cache=True, capture=capture
        )
        for r, (u, row) in enumerate(group):
            u.logprobs.extend(result.block_logprobs[r])
            u.layers, u.last = result.layers[r], result.last_logprobs[r]
            if capture is not None:
                captured = result.captured[r]
                u.prompt_hidden = captured[: len(row.prompt)]
                u.hidden.extend(_split(captured[len(row.prompt) :], row))


def _split(captured: Any, row: PackedRow) -> list[Any]:
    out, begin = [], 0
    for _, ids in row.blocks:
        out.append(captured[begin : begin + len(ids)])
        begin += len(ids)
    return out


def _more_passes(
    parts: DecoderParts, uniques: list[_Unique], pad_id: int, batch_size: int, capture: int | None
) -> None:
    rows = []
    for u in uniques:
        for first in range(batch_size, len(u.candidates), batch_size):
            blocks = [(len(u.ids), c) for c in u.candidates[first : first + batch_size]]
            rows.append((u, PackedRow(len(u.ids), (), blocks, first_logprobs=u.last)))
    for group in _passes(rows, batch_size):
        result = packed_forward(
            parts, [row for _, row in group], pad_id=pad_id, past=[u.layers for u, _ in group], capture=capture
        )
        for r, (u, row) in enumerate(group):
            u.logprobs.extend(result.block_logprobs[r])
            if capture is not None:
                u.hidden.extend(_split(result.captured[r], row))


def _new_state(unique: _Unique, capture: int | None) -> tuple[Any, Any]:
    hidden = None
    if capture is not None:
        import torch

        kept = unique.source.hidden[: unique.reused] if unique.reused else unique.prompt_hidden[:0]
        hidden = torch.cat([kept, unique.prompt_hidden])
    return unique.layers, hidden


def score(
    model: Any,
    requests: Sequence[ScoreRequest],
    *,
    pad_id: int,
    batch_size: int = DEFAULT_BATCH,
    capture: int | None = None,
) -> list[Scored]:
    """Score every request's candidates (see the module docstring); one :class:`Scored` per request, in order.

    Args:
        model: A decoder-only causal LM (:class:`~agentgym_budget.agents.scoring.packing.DecoderParts`).
        requests: The prompts and candidates; every request needs at least one prompt token and one candidate.
        pad_id: Token id of padding.
        batch_size: Most candidates in one forward pass.
        capture: Keep the hidden states entering this block (for training); gradients stay off either way.
    """
    import torch

    if not requests:
        return []
    parts = DecoderParts.of(model)
    uniques, index = _unique(requests, capture)
    with torch.no_grad() if capture is not None else torch.inference_mode():
        _first_passes(parts, uniques, pad_id, batch_size, capture)
        _more_passes(parts, uniques, pad_id, batch_size, capture)
    states = [_new_state(u, capture) for u in uniques]
    scored = [
        Scored(
            tuple(tuple(float(x) for x in values.tolist()) for values in u.logprobs),
            len(u.ids),
            u.reused,
            tuple(u.hidden) if capture is not None else None,
        )
        for u in uniques
    ]
    for request, u in zip(requests, index, strict=True):
        if request.state is not None:
            request.state.ids, (request.state.layers, request.state.hidden) = uniques[u].ids, states[u]
    return [scored[u] for u in index]
