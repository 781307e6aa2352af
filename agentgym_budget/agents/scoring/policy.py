"""From candidates' token log-probs to a policy: normalisation, temperature, epsilon, and a seeded choice.

A candidate's score is its tokens' log-likelihood given the prompt, normalised (:data:`NORMALISATIONS`):

* ``sum``: the plain sum (favours short commands);
* ``mean``: the sum over the number of tokens, end-of-turn token included (TWOSOME's token normalisation);
* ``word``: the sum over the number of words of the command (TWOSOME's word normalisation).

The policy is ``(1 - epsilon) * softmax(score / temperature) + epsilon / K`` over the ``K`` candidates;
``temperature=0`` puts all the softmax mass on the best score (the first of equal ones).
:func:`choose` draws from it with one uniform number from a generator seeded by the episode's seed and
the turn, so a choice depends on nothing else (not on other episodes scored beside it).

Example:
    >>> scores = candidate_scores([(-1.0, -0.2), (-0.5,)], ["go east", "look"], "mean")
    >>> [round(s, 3) for s in scores]
    [-0.6, -0.5]
    >>> [round(p, 3) for p in distribution(scores, temperature=0.1)]
    [0.269, 0.731]
    >>> distribution(scores, temperature=0)
    [0.0, 1.0]
    >>> choose([0.25, 0.75], seed=3, turn=0) in (0, 1)
    True
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Sequence

from agentgym_budget.errors import InvalidOptionError

__all__: list[str] = []

NORMALISATIONS = ("mean", "word", "sum")
"""How a candidate's token log-probs become its score (see the module docstring)."""


def check_normalise(normalise: str) -> str:
    """``normalise`` if it is one of :data:`NORMALISATIONS`.

    Raises:
        InvalidOptionError: It is not.
    """
    if normalise not in NORMALISATIONS:
        raise InvalidOptionError(f"normalise={normalise!r} is unknown; expected one of {', '.join(NORMALISATIONS)}.")
    return normalise


def divisor(command: str, tokens: int, normalise: str) -> float:
    """What a candidate's summed log-prob is divided by.

    Example:
        >>> divisor("take the coin", 4, "mean"), divisor("take the coin", 4, "word"), divisor("", 1, "word")
        (4.0, 3.0, 1.0)
    """
    if normalise == "mean":
        return float(max(1, tokens))
    if normalise == "word":
        return float(max(1, len(command.split())))
    return 1.0


def candidate_scores(token_logprobs: Sequence[Sequence[float]], commands: Sequence[str], normalise: str) -> list[float]:
    """Each candidate's score (see the module docstring)."""
    check_normalise(normalise)
    return [
        math.fsum(values) / divisor(command, len(values), normalise)
        for values, command in zip(token_logprobs, commands, strict=True)
    ]


def distribution(scores: Sequence[float], *, temperature: float, epsilon: float = 0.0) -> list[float]:
    """The policy over the candidates (see the module docstring).

    Raises:
        InvalidOptionError: No candidate, a negative temperature or ``epsilon`` outside ``[0, 1]``.
    """
    if not scores:
        raise InvalidOptionError("A policy over no candidates: the state lists no admissible action.")
    if temperature < 0 or not 0 <= epsilon <= 1:
        raise InvalidOptionError(f"Need temperature >= 0 and 0 <= epsilon <= 1; got {temperature}, {epsilon}.")
    if temperature == 0:
        best = max(range(len(scores)), key=lambda i: (scores[i], -i))
        soft = [1.0 if i == best else 0.0 for i in range(len(scores))]
    else:
        top = max(scores)
        weights = [math.exp((s - top) / temperature) for s in scores]
        total = math.fsum(weights)
        soft = [w / total for w in weights]
    uniform = 1.0 / len(scores)
    return [(1 - epsilon) * p + epsilon * uniform for p in soft]


def choose(probabilities: Sequence[float], *, seed: int, turn: int) -> int:
    """The index drawn from ``probabilities`` with the uniform number of ``(seed, turn)`` (inverse CDF)."""
    digest = hashlib.sha256(f"score-agent|{int(seed)}|{int(turn)}".encode()).digest()
    draw = random.Random(int.from_bytes(digest[:8], "big")).random() * math.fsum(probabilities)
    running = 0.0
    for index, p in enumerate(probabilities):
        running += p
        if draw < running:
            return index
    return max(i for i, p in enumerate(probabilities) if p > 0)
