"""Typed errors raised by agentgym-budget.

Every error derives from :class:`AgentGymBudgetError`, which itself derives from
:class:`gymnasium.error.Error`, so ``except gymnasium.error.Error`` still catches
them. Where Gymnasium or Python already has a matching category the error also
derives from it (``ResetNeeded``, ``ValueError``, ``TypeError``, ...), so generic
handlers keep working. Messages always say what was given and what is expected.

Example:
    >>> from agentgym_budget.errors import InvalidBudgetError
    >>> try:
    ...     raise InvalidBudgetError.for_value(0)
    ... except ValueError as err:
    ...     print(err)
    Invalid turn budget 0 (int): expected a positive integer number of turns, e.g. 20.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from gymnasium import error as gym_error

__all__ = [
    "AgentError",
    "AgentGymBudgetError",
    "DataError",
    "EpisodeOverError",
    "GenerationError",
    "InterpreterHaltedError",
    "InvalidActionError",
    "InvalidBudgetError",
    "InvalidInfoKeyError",
    "InvalidOptionError",
    "MissingDependencyError",
    "ModelPathError",
    "RunConfigError",
    "SnapshotMismatchError",
    "SnapshotUnsupportedError",
    "TrainingMemoryError",
    "UnknownAgentError",
    "UnknownEnvIdError",
    "UnknownSplitError",
    "UnknownTaskError",
    "WorkerError",
    "WrapperOrderError",
    "did_you_mean",
]


def did_you_mean(given: str, candidates: Iterable[str], *, limit: int = 3) -> str:
    """Return a " Did you mean ...?" hint for ``given``, or ``""`` if nothing is close.

    Example:
        >>> did_you_mean("cookng", ["cooking", "treasure"])
        " Did you mean 'cooking'?"
    """
    candidates = list(candidates)
    matches = difflib.get_close_matches(given, candidates, n=limit, cutoff=0.6)
    if not matches:
        lowered = {c.lower(): c for c in candidates}
        matches = [lowered[m] for m in difflib.get_close_matches(given.lower(), lowered, n=limit)]
    if not matches:
        return ""
    return " Did you mean " + " or ".join(repr(m) for m in matches) + "?"


class AgentGymBudgetError(gym_error.Error):
    """Base class of every error raised by agentgym-budget."""


class UnknownEnvIdError(AgentGymBudgetError, gym_error.NameNotFound):
    """An environment id that is not registered."""

    @classmethod
    def for_id(cls, env_id: str, known: Iterable[str]) -> UnknownEnvIdError:
        """The error for ``env_id``: the closest ids, and where the whole list is (not the list itself).

        Example:
            >>> print(UnknownEnvIdError.for_id("Cookng-v0", ["ns/Cooking-v0", "ns/Shop-v0"]))
            Unknown environment id 'Cookng-v0'. Did you mean 'ns/Cooking-v0'? The 2 registered ids: `agentgym-budget list --envs` or agentgym_budget.registered_ids().
        """
        known = sorted(known)
        return cls(
            f"Unknown environment id {env_id!r}.{did_you_mean(env_id, known)} The {len(known)} registered ids: "
            "`agentgym-budget list --envs` or agentgym_budget.registered_ids()."
        )


class UnknownTaskError(AgentGymBudgetError, LookupError):
    """A task id that is not part of the environment's task set."""

    @classmethod
    def for_task(cls, task: object, known: Iterable[str], where: str) -> UnknownTaskError:
        known = list(known)
        hint = did_you_mean(str(task), known) if isinstance(task, str) else ""
        shown = ", ".join(repr(k) for k in known[:5]) + (", ..." if len(known) > 5 else "")
        return cls(
            f"Unknown task {task!r} for {where}.{hint} Expected one of its "
            f"{len(known)} task ids ({shown}); `env.unwrapped.task_ids` lists them."
        )


class UnknownSplitError(AgentGymBudgetError, ValueError):
    """A split name the task family does not define."""

    @classmethod
    def for_split(cls, split: object, known: Iterable[str], where: str) -> UnknownSplitError:
        known = list(known)
        hint = did_you_mean(str(split), known) if isinstance(split, str) else ""
        return cls(f"Unknown split {split!r} for {where}.{hint} Expected one of: {', '.join(known)}.")


class InvalidBudgetError(AgentGymBudgetError, ValueError):
    """A turn budget that is not a positive integer (or a bad budget distribution)."""

    @classmethod
    def for_value(cls, value: object, source: str = "") -> InvalidBudgetError:
        origin = f" {source}" if source else ""
        return cls(
            f"Invalid turn budget {value!r} ({type(value).__name__}){origin}: "
            "expected a positive integer number of turns, e.g. 20."
        )


class InvalidActionError(AgentGymBudgetError, gym_error.InvalidAction, TypeError):
    """An action that is not a string, or a string longer than ``step`` accepts."""

    @classmethod
    def for_action(cls, action: object) -> InvalidActionError:
        return cls(
            f"Actions must be str, got {type(action).__name__}: {action!r:.80}. "
            "Pass the command text, e.g. env.step('open fridge')."
        )

    @classmethod
    def for_length(cls, action: str, limit: int) -> InvalidActionError:
        return cls(
            f"Action of {len(action):,} characters ({action[:40]!r}...): actions may hold at most {limit:,} "
            "characters; no turn was spent."
        )


class EpisodeOverError(AgentGymBudgetError, gym_error.ResetNeeded):
    """``step`` was called before ``reset`` or after the episode ended."""


class SnapshotMismatchError(AgentGymBudgetError, ValueError):
    """A snapshot restored into an environment that cannot hold it."""


class SnapshotUnsupportedError(AgentGymBudgetError, TypeError):
    """A layer of the environment stack cannot be snapshotted or cloned."""


class InvalidInfoKeyError(AgentGymBudgetError, ValueError):
    """An opt-in ``info`` key that the environment does not provide."""


class InvalidOptionError(AgentGymBudgetError, ValueError):
    """A ``reset`` option or constructor argument that is not understood."""


class InterpreterHaltedError(AgentGymBudgetError, RuntimeError):
    """A game's interpreter halted (a runtime error in the story, or a call past its time limit); reset to go on."""


class WrapperOrderError(AgentGymBudgetError, ValueError):
    """A wrapper was applied to a stack that lacks a wrapper it needs."""


class MissingDependencyError(AgentGymBudgetError, gym_error.DependencyNotInstalled):
    """An optional dependency (an extra) is not installed."""

    @classmethod
    def for_extra(cls, package: str, extra: str, feature: str) -> MissingDependencyError:
        from agentgym_budget._internal.install_hint import install_command

        return cls(
            f"{feature} needs the '{package}' package, which is not installed. "
            f"Install it with: {install_command(extra)}"
        )


class DataError(AgentGymBudgetError, ValueError):
    """User-provided data (a game file, a data directory) is missing or malformed."""


class ModelPathError(InvalidOptionError):
    """A model path (e.g. of an ``hf:PATH`` agent) that is missing or does not hold a loadable model."""


class TrainingMemoryError(InvalidOptionError):
    """A training configuration whose estimated peak memory exceeds what the machine has available."""


class GenerationError(AgentGymBudgetError, RuntimeError):
    """Offline task generation failed."""


class UnknownAgentError(AgentGymBudgetError, LookupError):
    """An agent name whose kind is not registered (see :mod:`agentgym_budget.agents`)."""


class AgentError(AgentGymBudgetError, RuntimeError):
    """An agent could not produce an action (e.g. its model server failed after every retry)."""


class RunConfigError(AgentGymBudgetError, ValueError):
    """An evaluation run that cannot be done as asked (invalid mode, or a resume with other settings)."""


class WorkerError(AgentGymBudgetError, RuntimeError):
    """A job of a parallel run failed in its worker process; finished results were kept."""
