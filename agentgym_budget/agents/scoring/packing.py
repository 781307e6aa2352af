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

__all__: list[str] = []


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


@dataclass(frozen=True)
class TreeRow:
    """A row's query tokens as a tree (the general form of a :class:`PackedRow`).

    Token ``i`` reads every cached token, its ancestors and itself; its position is one more than its parent's
    (``cached`` for a root). Group rollouts that share a prompt prefix are one tree: the shared tokens once.

    Attributes:
        cached: Tokens whose keys / values are given (positions ``0 .. cached - 1``).
        ids: Query token ids; a token's parent comes before it.
        parents: Per query token, its parent's index (``-1``: a root).
        blocks: ``(begin, end)`` query ranges whose tokens' log-probs are wanted, each token predicted by its parent's
            output (a root's by ``first_logprobs``).
        last: A query index whose next-token log-probs are returned (``None``: none).
        prefix: Leading query tokens that extend the cache as a chain (their keys / values are kept).
        first_logprobs: Log-probs over the vocabulary of a root token (the prediction after the cached tokens).
    """

    cached: int
    ids: Sequence[int]
    parents: Sequence[int]
    blocks: Sequence[tuple[int, int]]
    last: int | None = None
    prefix: int = 0
    first_logprobs: Any = None

    @property
    def length(self) -> int:
        """Query tokens of the row."""
        return len(self.ids)


def as_tree(row: PackedRow) -> TreeRow:
    """The :class:`TreeRow` of ``row``: its prompt a chain, each block a branch from the prompt token before it.

    Raises:
        ValueError: A block attached inside the cached tokens, or after the prompt's end.
    """
    n = len(row.prompt)
    ids, parents, blocks = list(row.prompt), list(range(-1, n - 1)), []
    for attach, block in row.blocks:
        parent = attach - 1 - row.cached
        if not -1 <= parent < n or (parent == -1 and row.first_logprobs is None):
            raise ValueError(f"a block attached at {attach} of a row with {row.cached} cached and {n} new tokens")
        begin = len(ids)
        for k, token in enumerate(block):
            parents.append(parent if k == 0 else len(ids) - 1)
            ids.append(token)
        blocks.append((begin, len(ids)))
    return TreeRow(row.cached, ids, parents, blocks, n - 1 if n else None, n, row.first_logprobs)


@dataclass
class PackedResult:
    """What a packed pass returns.

    Attributes:
        block_logprobs: Per row, per block: the log-prob of each of its tokens (a 1-D tensor).
        last_logprobs: Per row: log-probs over the vocabulary after its ``last`` token (``None`` without one).
        layers: Per row: ``(keys, values)`` per block of the model for its cached tokens and its ``prefix``
            (``[1, heads, tokens, dim]``), when ``keep_cache``.
        captured: Per row: the hidden states entering block ``capture`` of its query tokens (``[tokens, width]``).
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


def _runs(parents: Sequence[int]) -> list[tuple[int, int]]:
    """Maximal ranges ``[a, b)`` in which every token after the first is the child of the one before."""
    runs, begin = [], 0
    for i in range(1, len(parents) + 1):
        if i == len(parents) or parents[i] != i - 1:
            runs.append((begin, i))
            begin = i
    return runs


def _layout(rows: Sequence[TreeRow], columns: int, width: int, dtype: Any) -> tuple[Any, Any]:
    """``(mask [R, 1, Q, C + Q], positions [R, Q])`` of tree rows (see :class:`TreeRow`)."""
    import torch

    allowed = torch.zeros((len(rows), width, columns + width), dtype=torch.bool)
    positions = torch.zeros((len(rows), width), dtype=torch.long)
    for r, row in enumerate(rows):
        n = row.length
        allowed[r, :n, columns - row.cached : columns] = True
        depth = [0] * n
        for a, b in _runs(row.parents):
            parent = row.parents[a]
            if parent >= 0:
                allowed[r, a:b, columns:] = allowed[r, parent, columns:]
            allowed[r, a:b, columns + a : columns + b] |= torch.tril(torch.ones((b - a, b - a), dtype=torch.bool))
            first = depth[parent] + 1 if parent >= 0 else 0
            depth[a:b] = range(first, first + b - a)
        positions[r, :n] = torch.tensor(depth, dtype=torch.long) + row.cached
        for pad in range(n, width):  # padding queries read only themselves (no empty softmax)
            allowed[r, pad, columns + pad] = True
    mask = torch.zeros(allowed.shape, dtype=dtype).masked_fill_(~allowed, torch.finfo(dtype).min)
    return mask[:, None], positions


def _padded_past(rows: Sequence[TreeRow], past: Sequence[Any], columns: int) -> list[tuple[Any, Any]] | None:
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
    rows: Sequence[PackedRow | TreeRow],
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
        rows: The rows (:class:`PackedRow` or :class:`TreeRow`).
        pad_id: Token id of query padding.
        past: Per row, the ``(keys, values)`` per block of its ``cached`` tokens (``None`` for rows without).
        hidden: Per row, the hidden states entering block ``start`` of its query tokens (``[tokens, width]``),
            instead of token ids read from the embedding (``start > 0``: the blocks below are not run).
        start: The first block run.
        capture: Keep the hidden states entering this block (:attr:`PackedResult.captured`).
        keep_cache: Return each row's cached and ``prefix`` keys / values (:attr:`PackedResult.layers`).
    """
    import torch

    rows = [as_tree(row) if isinstance(row, PackedRow) else row for row in rows]
    columns = max((row.cached for row in rows), default=0)
    width = max(max(row.length for row in rows), 1)
    mask, positions = _layout(rows, columns, width, parts.head.weight.dtype)
    if hidden is None:
        ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
        for r, row in enumerate(rows):
            ids[r, : row.length] = torch.tensor(list(row.ids), dtype=torch.long)
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
    result = _read_logprobs(parts, rows, parts.norm(states))
    if keep_cache:
        result.layers = [
            tuple(
                (k[r : r + 1, :, columns - row.cached : columns + row.prefix].clone(),
                 v[r : r + 1, :, columns - row.cached : columns + row.prefix].clone())
                for k, v in cache.out
            )
            for r, row in enumerate(rows)
        ]  # fmt: skip
    if captured is not None:
        result.captured = [captured[r, : row.length].detach() for r, row in enumerate(rows)]
    return result


def _read_logprobs(parts: DecoderParts, rows: Sequence[TreeRow], states: Any) -> PackedResult:
    """Log-probs of every block token, and of the token after each row's ``last`` token.

    Every wanted log-prob is read in one indexing op (then split into blocks), so the backward pass makes one
    gradient of the head's output, not one per token."""
    import torch

    sources: list[tuple[int, int]] = []  # (row, query) whose output goes through the head
    entries: list[tuple[int, int, int]] = []  # per block token in order: (row, head index or -1, token)
    sizes: list[int] = []
    last: list[int | None] = []
    for r, row in enumerate(rows):
        for begin, end in row.blocks:
            for i in range(begin, end):
                parent = row.parents[i]
                if parent >= 0:
                    sources.append((r, parent))
                entries.append((r, len(sources) - 1 if parent >= 0 else -1, int(row.ids[i])))
            sizes.append(end - begin)
        if row.last is not None:
            sources.append((r, row.last))
        last.append(len(sources) - 1 if row.last is not None else None)
    logprobs = None
    if sources:
        gathered = states[[r for r, _ in sources], [q for _, q in sources]]
        logits = parts.head(gathered)
        logprobs = torch.log_softmax(logits.float() if logits.dtype in (torch.float16, torch.bfloat16) else logits, -1)
    flat = _pick(logprobs, rows, entries)
    blocks = list(flat.split(sizes)) if entries else []
    values, begin = [], 0
    for row in rows:
        values.append(blocks[begin : begin + len(row.blocks)])
        begin += len(row.blocks)
    return PackedResult(values, [None if index is None else logprobs[index] for index in last])


def _pick(logprobs: Any, rows: Sequence[TreeRow], entries: list[tuple[int, int, int]]) -> Any:
    """The log-prob of each entry's token, from the head's output or its row's ``first_logprobs``, in order."""
    import torch

    inside = [i for i, (_, index, _) in enumerate(entries) if index >= 0]
    outside = [i for i, (_, index, _) in enumerate(entries) if index < 0]
    if not outside:
        return logprobs[[entries[i][1] for i in inside], [entries[i][2] for i in inside]]
    dtype = logprobs.dtype if logprobs is not None else rows[entries[outside[0]][0]].first_logprobs.dtype
    flat = torch.zeros(len(entries), dtype=dtype)
    if inside:
        picked = logprobs[[entries[i][1] for i in inside], [entries[i][2] for i in inside]]
        flat = flat.index_put((torch.tensor(inside),), picked)
    firsts = torch.stack([rows[entries[i][0]].first_logprobs[entries[i][2]] for i in outside]).to(dtype)
    return flat.index_put((torch.tensor(outside),), firsts)
