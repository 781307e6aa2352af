"""Snapshots: the state of an env stack as data, its portable bytes, its integrity keys, and the stack walk.

* :mod:`~agentgym_budget.snapshots.state`: the immutable records (:class:`EnvState`, ``TextEnvState``).
* :mod:`~agentgym_budget.snapshots.codec`: versioned, self-describing bytes that load without running code.
* :mod:`~agentgym_budget.snapshots.keys`: the optional HMAC key that makes edited snapshots refused.
* :mod:`~agentgym_budget.snapshots.stack`: :func:`get_state`, :func:`set_state` and :func:`clone` through
  every wrapper of a stack (``StateSnapshot`` builds on them).

May import: :mod:`agentgym_budget.errors`, :mod:`agentgym_budget._version` and
:mod:`agentgym_budget._internal`; never the env contract or a task family (an env's capabilities are read
from its attributes, so this room sits below :mod:`agentgym_budget.core`).

Example:
    >>> import gymnasium as gym
    >>> import agentgym_budget
    >>> from agentgym_budget.snapshots import get_state, set_state
    >>> env = gym.make("agentgym_budget/TextWorld-CoinCollector-v0")
    >>> _ = env.reset(seed=1)
    >>> state = get_state(env)
    >>> first = env.step("go north")[0]
    >>> set_state(env, state)
    >>> env.step("go north")[0] == first
    True
"""

from agentgym_budget.snapshots.stack import clone as clone
from agentgym_budget.snapshots.stack import get_state as get_state
from agentgym_budget.snapshots.stack import set_state as set_state
from agentgym_budget.snapshots.state import EnvState as EnvState

__all__: list[str] = []  # the names above are listed by the modules that define them (docs/public-api.md)
