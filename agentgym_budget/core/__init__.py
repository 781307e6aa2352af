"""The env contract: what every agentgym-budget environment is and returns.

:class:`~agentgym_budget.core.env.TextEnv` (the base class of every family: strict Gymnasium API,
seeded tasks, native snapshots), the text spaces and normalisation (:mod:`~agentgym_budget.core.text`,
:mod:`~agentgym_budget.core.text_space`), the :class:`~agentgym_budget.core.turn.Turn` a step returns and
the opt-in ``info`` keys (:mod:`~agentgym_budget.core.info_keys`).

May import: :mod:`agentgym_budget.errors`, :mod:`agentgym_budget.snapshots` (the state records an env
returns) and :mod:`agentgym_budget._internal`. Task families, wrappers and everything above import it.
"""

__all__: list[str] = []
