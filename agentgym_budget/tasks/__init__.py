"""Task families. Importing this package registers every family's ids with Gymnasium.

Each family is a subpackage that registers its own ids on import:

* :mod:`agentgym_budget.tasks.textworld`: TextWorld games (generated or from files).
* :mod:`agentgym_budget.tasks.alfworld`: ALFWorld household tasks (generated or official data).
* :mod:`agentgym_budget.tasks.webshop`: WebShop-style shopping (generated catalogs or WebShop's data files).
* :mod:`agentgym_budget.tasks.twx`: the TextWorldExpress games (its native simulator, in a JVM).
"""

from __future__ import annotations

from agentgym_budget.tasks import alfworld, textworld, twx, webshop

__all__ = ["alfworld", "textworld", "twx", "webshop"]
