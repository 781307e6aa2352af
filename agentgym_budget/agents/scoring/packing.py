"""One forward pass for a prompt and all its candidate commands: packed rows, their attention mask, their log-probs.

A **row** is one prompt read on top of the keys / values already computed for its first ``cached`` tokens
(:class:`PackedRow`): its new prompt tokens, then every candidate's tokens, each candidate a **block**
attached at a prefix length of the prompt. A block's tokens sit at the positions right after that prefix
and attend to the prompt's first ``attach`` tokens and to their own block's earlier tokens, never to
another block: one pass scores every candidate as if each had been appended to the prompt alone (the
tests hold it equal to one forward per candidate within 1e-5). Rows of different lengths share a pass:
cached keys / values are right-aligned in ``C`` leading columns, queries right-padded; the mask is a
4-D additive one that ``transformers`` passes to attention as it is.

The agent scores a turn with one block per candidate attached at the end of its prompt; training reads a
whole episode in one row, its prompt once and each turn's candidates attached where that turn's prompt
ended. :class:`DecoderParts` runs the layers itself (embedding, the blocks, the final norm, the output
head), so a pass can start at a block from hidden states kept earlier and keep those of a block for later.

Example::

    parts = DecoderParts.of(model)
    rows = [PackedRow(0, prompt_ids, [(len(prompt_ids), ids) for ids in candidates])]
    result = packed_forward(parts, rows, pad_id=0)
    result.block_logprobs[0]  # one tensor of token log-probs per candidate
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentgym_budget.errors import DataError

__all__ = ["DecoderParts", "PackedRow", "packed_forward"]


@dataclass(frozen=True)
class DecoderParts:
    """The pieces of a decoder-only causal LM a packed pass runs one by one (Llama, Qwen2, Mistral, SmolLM2...).

    Attributes:
        embed: The token embedding.
        layers: The decoder blocks, in order.
        norm: The final norm.
        rotary: The rotary position embedding (called with hidden states and positions).
        head: The output projection to the vocabulary.
    """

    embed: Any
    layers: Any
    norm: Any
    rotary: Any
    head: Any

    @classmethod
    def of(cls, model: Any) -> DecoderParts:
        """The parts of ``model`` (a ``transformers`` causal LM, possibly wrapped by ``peft``).

        Raises:
            DataError: The model is not a decoder with ``layers``, ``norm`` and ``rotary_emb`` (e.g. GPT-2).
        """
        inner = model
        while hasattr(inner, "base_model") and inner.base_model is not inner:  # peft wrappers
            inner = inner.base_model
        inner = getattr(inner, "model", inner) if hasattr(inner, "lm_head") else inner
        decoder = getattr(inner, "model", None) if not hasattr(inner, "layers") else inner
        head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
        missing = [name for name in ("layers", "norm", "rotary_emb", "embed_tokens") if not hasattr(decoder, name)]
        if decoder is None or missing or head is None:
            raise DataError(
                f"score: agents need a decoder-only causal LM with embed_tokens, layers, norm and rotary_emb "
                f"(Llama, Qwen2, Mistral, SmolLM2...); {type(model).__name__} lacks {', '.join(missing) or 'a head'}."
            )
        return cls(decoder.embed_tokens, decoder.layers, decoder.norm, decoder.rotary_emb, head)

    @property
    def depth(self) -> int:
        """Number of decoder blocks."""
        return len(self.layers)


@dataclass(frozen=True)
class PackedRow:
    """One row of a packed pass (see the module docstring).

    Attributes:
        cached: Leading prompt tokens whose keys / values are given (``past``), not read again.
        prompt: The prompt's new token ids, at positions ``cached, cached + 1, ...``.
        blocks: ``(attach, ids)`` per candidate: its tokens at positions ``attach, attach + 1, ...``, reading the
            prompt's first ``attach`` tokens. ``attach - 1`` must be a new prompt token (its output predicts the
            block's first token) unless ``first_logprobs`` gives that prediction.
        first_logprobs: Log-probs over the vocabulary of the token after the whole prompt (a row with no new
            prompt token, scoring more candidates of a prompt read before).
    """

    cached: int
    prompt: Sequence[int]
    blocks: Sequence[tuple[int, Sequence[int]]]
    first_logprobs: Any = None

    @property
    def length(self) -> int:
        """Query tokens of the row."""
        return len(self.prompt) + sum(len(ids) for _, ids in self.blocks)


@dataclass
class PackedResult:
    """What a packed pass returns.

    Attributes:
        block_logprobs: Per row, per block: the log-prob of each of its tokens (a 1-D tensor).
        last_logprobs: Per row: log-probs over the vocabulary after its last new prompt token (``None``
            without one).
        layers: Per row: ``(keys, values)`` per block of the model for the row's whole prompt (cached and
            new tokens, ``[1, heads, tokens, dim]``), when ``keep_cache``.
        captured: Per row: the hidden states entering block ``capture`` of its query tokens (prompt then
            blocks, ``[tokens, width]``), when asked.
    """

    block_logprobs: list[list[Any]]
    last_logprobs: list[Any]
    layers: list[tuple[tuple[Any, Any], ...]] = field(default_factory=list)
    captured: list[Any] = field(default_factory=list)


class _PackedCache:
    """The minimal cache attention layers call: prepends the given keys / values and keeps the result."""

    def __init__(self, past: Sequence[tuple[Any, Any]] | None, depth: int) -> None:
        self.past = past
        self.out: list[tuple[Any, Any] | None] = [None] * depth

    def update(self, keys: Any, values: Any, layer: int, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        import torch

        if self.past is not None:
            old_keys, old_values = self.past[layer]
            keys, values = torch.cat([old_keys, keys], dim=-2), torch.cat([old_values, values], dim=-2)
        self.out[layer] = (keys, values)
        return keys, values


def _layout(rows: Sequence[PackedRow], columns: int, width: int, dtype: Any) -> tuple[Any, Any, list[list[Any]]]:
    """``(mask [R, 1, Q, C + Q], positions [R, Q], targets)``; ``targets[row][block]`` lists per token of the block
    the query index whose output predicts it (``-1``: the row's ``first_logprobs``)."""
    import torch

    count = len(rows)
    allowed = torch.zeros((count, width, columns + width), dtype=torch.bool)
    positions = torch.zeros((count, width), dtype=torch.long)
    targets: list[list[Any]] = []
    for r, row in enumerate(rows):
        start = columns - row.cached
        n = len(row.prompt)
        allowed[r, :n, start:columns] = True
        allowed[r, :n, columns : columns + n] |= torch.tril(torch.ones((n, n), dtype=torch.bool))
        positions[r, :n] = torch.arange(row.cached, row.cached + n)
        query = n
        row_targets = []
        for attach, ids in row.blocks:
            size = len(ids)
            cached_part = min(attach, row.cached)
            allowed[r, query : query + size, start : start + cached_part] = True
            if attach > row.cached:
                allowed[r, query : query + size, columns : columns + attach - row.cached] = True
            own = columns + query
            allowed[r, query : query + size, own : own + size] |= torch.tril(torch.ones((size, size), dtype=torch.bool))
            positions[r, query : query + size] = torch.arange(attach, attach + size)
            first = attach - 1 - row.cached
            if first < 0 and row.first_logprobs is None:
                raise ValueError("a block attached inside the cached prompt needs the row's first_logprobs")
            row_targets.append([first if first >= 0 else -1, *range(query, query + size - 1)])
            query += size
        for pad in range(query, width):  # padding queries read only themselves (no empty softmax)
            allowed[r, pad, columns + pad] = True
        targets.append(row_targets)
    mask = torch.zeros(allowed.shape, dtype=dtype).masked_fill_(~allowed, torch.finfo(dtype).min)
    return mask[:, None], positions, targets


def _padded_past(rows: Sequence[PackedRow], past: Sequence[Any], columns: int) -> list[tuple[Any, Any]] | None:
    """Per model block, the rows' cached keys / values right-aligned in ``columns`` (zeros before them)."""
    import torch

    if columns == 0:
        return None
    first = next(p for p, row in zip(past, rows, strict=True) if row.cached)
    padded = []
    for layer in range(len(first)):
        pair = []
        for index in (0, 1):
            sample = first[layer][index]
            tensor = torch.zeros((len(rows), sample.shape[1], columns, sample.shape[3]), dtype=sample.dtype)
            for r, row in enumerate(rows):
                if row.cached:
                    tensor[r, :, columns - row.cached :] = past[r][layer][index][0, :, : row.cached]
            pair.append(tensor)
        padded.append((pair[0], pair[1]))
    return padded


def packed_forward(
    parts: DecoderParts,
    rows: Sequence[PackedRow],
    *,
    pad_id: int,
    past: Sequence[Any] | None = None,
    hidden: Sequence[Any] | None = None,
    start: int = 0,
    capture: int | None = None,
    keep_cache: bool = False,
) -> PackedResult:
    """Run ``rows`` through the model in one pass (see the module docstring); differentiable unless the caller
    disables gradients.

    Args:
        parts: The model's :class:`DecoderParts`.
        rows: The rows.
        pad_id: Token id of query padding.
        past: Per row, the ``(keys, values)`` per block of its ``cached`` tokens (``None`` for rows without).
        hidden: Per row, the hidden states entering block ``start`` of its query tokens (``[tokens, width]``),
            instead of token ids read from the embedding (``start > 0``: the blocks below are not run).
        start: The first block run.
        capture: Keep the hidden states entering this block (:attr:`PackedResult.captured`).
        keep_cache: Return each row's prompt keys / values (:attr:`PackedResult.layers`).
    """
    import torch

    columns = max((row.cached for row in rows), default=0)
    width = max(max(row.length for row in rows), 1)
    dtype = parts.head.weight.dtype
    mask, positions, targets = _layout(rows, columns, width, dtype)
    if hidden is None:
        ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
        for r, row in enumerate(rows):
            flat = [*row.prompt, *(t for _, block in row.blocks for t in block)]
            ids[r, : len(flat)] = torch.tensor(flat, dtype=torch.long)
        states = parts.embed(ids)
    else:
        pad = torch.nn.functional.pad
        states = torch.stack([pad(h, (0, 0, 0, width - h.shape[0])) for h in hidden])
    cache = _PackedCache(_padded_past(rows, past, columns) if past is not None else None, parts.depth)
    rotary = parts.rotary(states, positions)
    captured = None
    for number in range(start, parts.depth):
        if number == capture:
            captured = states
        states = parts.layers[number](
            states,
            attention_mask=mask,
            position_ids=positions,
            cache=cache if keep_cache or past is not None else None,
            use_cache=keep_cache,
            position_embeddings=rotary,
        )
    states = parts.norm(states)
    result = _read_logprobs(parts, rows, states, targets)
    if keep_cache:
        result.layers = [
            tuple(
                (k[r : r + 1, :, columns - row.cached : columns + len(row.prompt)].clone(),
                 v[r : r + 1, :, columns - row.cached : columns + len(row.prompt)].clone())
                for k, v in cache.out
            )
            for r, row in enumerate(rows)
        ]  # fmt: skip
    if captured is not None:
        result.captured = [captured[r, : row.length].detach() for r, row in enumerate(rows)]
    return result


def _read_logprobs(
    parts: DecoderParts, rows: Sequence[PackedRow], states: Any, targets: list[list[Any]]
) -> PackedResult:
    """Log-probs of every block token, and of the token after each row's last new prompt token."""
    import torch

    sources: list[tuple[int, int]] = []  # (row, query) whose output goes through the head
    wanted: list[list[list[tuple[int, int]]]] = []  # per row, per block, per token: (head index or -1, token)
    last: list[int | None] = []
    for r, (row, row_targets) in enumerate(zip(rows, targets, strict=True)):
        per_block = []
        for (_, ids), queries in zip(row.blocks, row_targets, strict=True):
            entries = []
            for query, token in zip(queries, ids, strict=True):
                if query >= 0:
                    sources.append((r, query))
                entries.append((len(sources) - 1 if query >= 0 else -1, int(token)))
            per_block.append(entries)
        wanted.append(per_block)
        if row.prompt:
            sources.append((r, len(row.prompt) - 1))
        last.append(len(sources) - 1 if row.prompt else None)
    logprobs = None
    if sources:
        gathered = torch.stack([states[r, q] for r, q in sources])
        logits = parts.head(gathered)
        logprobs = torch.log_softmax(logits.float() if logits.dtype in (torch.float16, torch.bfloat16) else logits, -1)
    values = []
    for row, per_block in zip(rows, wanted, strict=True):
        blocks = []
        for entries in per_block:
            picked = [(row.first_logprobs if index < 0 else logprobs[index])[token] for index, token in entries]
            blocks.append(torch.stack(picked) if picked else torch.zeros(0))
        values.append(blocks)
    return PackedResult(values, [None if index is None else logprobs[index] for index in last])
