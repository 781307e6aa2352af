"""verl plug-in: importing this module registers the ``agentgym_budget`` agent loop (extra ``verl``).

The package declares it as the entry point ``agentgym_budget`` of verl's group ``verl.plugins``; verl 0.9
loads every entry point of that group when it is imported, in every process, Ray workers included
(``VERL_USE_EXTERNAL_PLUGINS=none`` turns that off), so rows with ``agent_name: agentgym_budget`` find the
loop without any configuration. verl hides a plug-in's import error (it logs it at debug level), so a
failure is logged here as a warning too.
"""

from __future__ import annotations

import logging

__all__: list[str] = []

try:
    from agentgym_budget.integrations.verl import register_agent_loop

    register_agent_loop()
except Exception:
    logging.getLogger(__name__).warning("agentgym-budget could not register its verl agent loop", exc_info=True)
    raise
