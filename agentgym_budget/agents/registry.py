"""Agent names for the command line: ``KIND[:ARGUMENT][:key=value,key=value...]``.

Examples: ``random``, ``expert``, ``noisy-expert-recover:eps=0.3``, ``openai:Qwen/Qwen2.5-7B-Instruct``,
``openai:llama3.1:8b:base_url=http://127.0.0.1:11434/v1,temperature=0.2``. The argument (if the kind
takes one, e.g. the model) may itself contain ``:``; parameters start at the first ``:`` that is followed
by ``name=``. :func:`parse_agent` returns an :class:`AgentSpec`: picklable (worker processes rebuild the
agent from it with :meth:`AgentSpec.build`) and with a canonical :attr:`~AgentSpec.name` that is stored
with every episode. The canonical name always shows the parameters that define the agent's behaviour
(``eps`` of the noisy experts) and any other parameter that differs from its default, except
*operational* ones (server URL, timeouts, retries, concurrency) that do not change what the agent does.

Register your own kinds with :func:`register_agent` (in an importable module, so that worker processes
see the factory).

Example:
    >>> spec = parse_agent("noisy-expert-recover:eps=0.25")
    >>> spec.name, spec.build()
    ('noisy-expert-recover:eps=0.25', NoisyExpertRecover(eps=0.25))
    >>> parse_agent("noisy-expert-norecover").name
    'noisy-expert-norecover:eps=0.3'
    >>> parse_agent("openai:llama3.1:8b:base_url=http://127.0.0.1:11434/v1,temperature=0.2").name
    'openai:llama3.1:8b:temperature=0.2'
    >>> parse_agent("noisy-expert-recovr")
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.UnknownAgentError: Unknown agent 'noisy-expert-recovr'. Did you mean 'noisy-expert-recover' or ...

Parameter values are checked when the name is parsed (type, range, and a kind's own ``check``), so a
bad value is refused before a run starts or writes anything:

    >>> parse_agent("noisy-expert-recover:eps=1.5")
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.InvalidOptionError: agent 'noisy-expert-recover:eps=1.5': eps=1.5 is out of range: expected a number in [0, 1] (probability of a random non-expert action each turn).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentgym_budget.errors import AgentGymBudgetError, InvalidOptionError, UnknownAgentError, did_you_mean

__all__ = ["AgentSpec", "agent_kinds", "parse_agent", "register_agent"]

_PARAMS_START = re.compile(r":(?=[A-Za-z_][A-Za-z0-9_]*=)")
_PARAM_SPLIT = re.compile(r",(?=[A-Za-z_][A-Za-z0-9_]*=)")
_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


@dataclass(frozen=True)
class Param:
    """One parameter of an agent kind.

    Attributes:
        name: Parameter name (a Python identifier, passed to the factory as a keyword).
        type: ``int``, ``float``, ``str`` or ``bool``.
        default: Default value.
        help: One line for listings.
        identity: Always shown in the canonical name (it defines the agent).
        operational: Never shown in the canonical name (it does not change the agent's behaviour).
        minimum: Smallest valid value of a number (``None``: unbounded); numbers must be finite.
        maximum: Largest valid value of a number (``None``: unbounded).
        above_minimum: The value must be strictly greater than ``minimum``.
        check: Called with a converted value; raises an error of the package (or ``ValueError``)
            when the value is unusable, e.g. a file that cannot be read.
    """

    name: str
    type: type
    default: Any
    help: str = ""
    identity: bool = False
    operational: bool = False
    minimum: float | None = None
    maximum: float | None = None
    above_minimum: bool = False
    check: Callable[[Any], Any] | None = None

    def _range(self) -> str:
        kind = "an integer" if self.type is int else "a number"
        if self.minimum is not None and self.maximum is not None:
            return f"{kind} in {'(' if self.above_minimum else '['}{self.minimum:g}, {self.maximum:g}]"
        if self.minimum is not None:
            return f"{kind} {'>' if self.above_minimum else '>='} {self.minimum:g}"
        if self.maximum is not None:
            return f"{kind} <= {self.maximum:g}"
        return f"a finite {kind.split()[-1]}"

    def _in_range(self, value: float) -> bool:
        if not math.isfinite(value):
            return False
        if self.minimum is not None and (value <= self.minimum if self.above_minimum else value < self.minimum):
            return False
        return self.maximum is None or value <= self.maximum

    def convert(self, text: str, where: str) -> Any:
        """Parse ``text`` into this parameter's type and check it (raises :class:`InvalidOptionError`)."""
        try:
            if self.type is bool:
                lowered = text.strip().lower()
                if lowered not in _TRUE | _FALSE:
                    raise ValueError(text)
                value = lowered in _TRUE
            else:
                value = self.type(text)
        except ValueError:
            raise InvalidOptionError(
                f"{where}: parameter {self.name}={text!r} is not a valid {self.type.__name__} ({self.help})."
            ) from None
        if self.type in (int, float) and not self._in_range(value):
            raise InvalidOptionError(
                f"{where}: {self.name}={text} is out of range: expected {self._range()} ({self.help})."
            )
        if self.check is not None:
            try:
                self.check(value)
            except (ValueError, AgentGymBudgetError) as err:
                raise InvalidOptionError(f"{where}: {self.name}={text!r} cannot be used: {err}") from None
        return value


def _format(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


@dataclass(frozen=True)
class AgentKind:
    """A named kind of agent.

    Attributes:
        name: The kind's name (``"random"``, ``"openai"``, ...).
        factory: ``factory([argument,] **params)`` returns a new agent.
        description: One line for listings.
        params: Accepted parameters.
        argument: Name of the required positional argument (e.g. ``"model"``), or ``None``.
        check_argument: Called with the argument when a name is parsed; raises an error of the
            package (or ``ValueError``) when it is unusable, e.g. a model path that holds no model.
    """

    name: str
    factory: Callable[..., Any]
    description: str
    params: tuple[Param, ...] = ()
    argument: str | None = None
    check_argument: Callable[[str], Any] | None = None

    def param(self, name: str) -> Param:
        """The parameter called ``name`` (raises :class:`InvalidOptionError` naming the valid ones)."""
        for param in self.params:
            if param.name == name:
                return param
        names = [p.name for p in self.params]
        raise InvalidOptionError(
            f"Agent {self.name!r} has no parameter {name!r}.{did_you_mean(name, names)} "
            f"Parameters: {', '.join(names) or 'none'}."
        )


@dataclass(frozen=True)
class AgentSpec:
    """A parsed agent name: the kind, its argument and every parameter value (defaults filled in).

    Attributes:
        kind: The agent kind.
        argument: The positional argument, or ``None``.
        params: ``(name, value)`` pairs in the kind's parameter order.
    """

    kind: AgentKind
    argument: str | None
    params: tuple[tuple[str, Any], ...]

    @property
    def name(self) -> str:
        """Canonical name (see the module docstring); stored with every episode."""
        shown = []
        for (name, value), param in zip(self.params, self.kind.params, strict=True):
            if param.identity or (not param.operational and value != param.default):
                shown.append(f"{name}={_format(value)}")
        parts = [self.kind.name]
        if self.argument is not None:
            parts.append(self.argument)
        if shown:
            parts.append(",".join(shown))
        return ":".join(parts)

    @property
    def options(self) -> dict[str, Any]:
        """The parameter values as a dict."""
        return dict(self.params)

    def build(self) -> Any:
        """A new agent of this spec."""
        args = () if self.argument is None else (self.argument,)
        return self.kind.factory(*args, **self.options)

    def __str__(self) -> str:
        return self.name


_KINDS: dict[str, AgentKind] = {}


def register_agent(
    name: str,
    factory: Callable[..., Any],
    *,
    description: str,
    params: Sequence[Param] = (),
    argument: str | None = None,
    check_argument: Callable[[str], Any] | None = None,
) -> AgentKind:
    """Make ``name`` usable in :func:`parse_agent` (and so in ``--agent``); returns the kind."""
    if not re.fullmatch(r"[a-z][a-z0-9_.-]*", name):
        raise InvalidOptionError(f"Agent kind names are lower-case words joined by '-', got {name!r}.")
    kind = AgentKind(name, factory, description, tuple(params), argument, check_argument)
    _KINDS[name] = kind
    return kind


def unregister_agent(name: str) -> None:
    """Forget the kind ``name`` (no error if it is not registered)."""
    _KINDS.pop(name, None)


def agent_kinds() -> Mapping[str, AgentKind]:
    """Every registered agent kind by name (built-ins are registered on import of :mod:`agentgym_budget.agents`)."""
    return dict(_KINDS)


def parse_agent(text: str | AgentSpec) -> AgentSpec:
    """Parse ``KIND[:ARGUMENT][:key=value,...]`` into an :class:`AgentSpec` (specs pass through).

    Raises:
        UnknownAgentError: The kind is not registered.
        InvalidOptionError: A missing or unexpected argument, an unknown parameter or a bad value.
    """
    if isinstance(text, AgentSpec):
        return text
    if not isinstance(text, str) or not text.strip():
        raise InvalidOptionError(f"Agent names are strings like 'random' or 'openai:MODEL', got {text!r}.")
    text = text.strip()
    match = _PARAMS_START.search(text)
    head, tail = (text[: match.start()], text[match.end() :]) if match else (text, "")
    kind_name, _, argument = head.partition(":")
    kind = _KINDS.get(kind_name)
    if kind is None:
        known = sorted(_KINDS)
        raise UnknownAgentError(
            f"Unknown agent {kind_name!r}.{did_you_mean(kind_name, known)} Known agents: {', '.join(known)} "
            "(`agentgym-budget list` describes them)."
        )
    if kind.argument is None and argument:
        raise InvalidOptionError(f"Agent {kind.name!r} takes no argument, got {argument!r} in {text!r}.")
    if kind.argument is not None and not argument:
        raise InvalidOptionError(
            f"Agent {kind.name!r} needs its {kind.argument}: write {kind.name}:{kind.argument.upper()}."
        )
    if kind.check_argument is not None and argument:
        try:
            kind.check_argument(argument)
        except AgentGymBudgetError as err:
            raise type(err)(f"agent {text!r}: {err}") from None
        except ValueError as err:
            raise InvalidOptionError(f"agent {text!r}: {err}") from None
    values = {param.name: param.default for param in kind.params}
    for item in _PARAM_SPLIT.split(tail) if tail else ():
        key, _, raw = item.partition("=")
        values[key] = kind.param(key).convert(raw, f"agent {text!r}")
    return AgentSpec(kind, argument or None, tuple((p.name, values[p.name]) for p in kind.params))
