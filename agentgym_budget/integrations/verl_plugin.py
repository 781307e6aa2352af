"""verl plug-in: importing this module registers the ``agentgym_budget`` agent loop (extra ``verl``).

The package declares it as the entry point ``agentgym_budget`` of verl's group ``verl.plugins``; verl 0.9
loads every entry point of that group when it is imported, in every process, Ray workers included
(``VERL_USE_EXTERNAL_PLUGINS=none`` turns that off), so rows with ``agent_name: agentgym_budget`` find the
loop without any configuration. verl hides a plug-in's import error (it logs it at debug level), so a
failure is logged here as a warning too.
"""

from __future__ import annotations

import importlib.util
import logging

from agentgym_budget.integrations.verl import register_agent_loop

__all__: list[str] = []

if importlib.util.find_spec("verl") is not None:  # verl imports this module; pytest's doctest collection too
    try:
        register_agent_loop()
    except Exception:
        logging.getLogger(__name__).warning("agentgym-budget could not register its verl agent loop", exc_info=True)
        raise
