"""Task families. Importing this package registers every family's ids with Gymnasium.

Each family is a subpackage that registers its own ids on import:

* :mod:`agentgym_budget.tasks.textworld`: TextWorld games (generated or from files).
* :mod:`agentgym_budget.tasks.alfworld`: ALFWorld household tasks (generated or official data).
* :mod:`agentgym_budget.tasks.webshop`: WebShop-style shopping (generated catalogs or WebShop's data files).
* :mod:`agentgym_budget.tasks.twx`: the TextWorldExpress games (its native simulator, in a JVM).
* :mod:`agentgym_budget.tasks.babyai`: minigrid's BabyAI levels as GLAM's text, with its bot as the expert.

The room for task families; a new family is a subpackage here: an env subclassing
:class:`~agentgym_budget.core.env.TextEnv` (with native snapshots), its engine and data, and a ``register()``
of its ids that its ``__init__`` calls on import; this package's ``__init__`` imports the family.

May import: :mod:`agentgym_budget.core`, :mod:`agentgym_budget.registration`, :mod:`agentgym_budget.snapshots`,
:mod:`agentgym_budget.storage`, :mod:`agentgym_budget.errors` and :mod:`agentgym_budget._internal`; never the
wrappers, vector envs, agents or anything above (the registry loads the families by entry-point name).
"""

from __future__ import annotations

from agentgym_budget.tasks import alfworld, babyai, textworld, twx, webshop  # noqa: F401  (importing a family registers its ids)

__all__: list[str] = []
