"""The ``agentgym-budget`` command line.

Every subcommand is a module ``agentgym_budget/cli/cmd_<name>.py`` with ``NAME``, ``HELP``,
``add_arguments(parser)`` and ``run(args) -> int``; :func:`~agentgym_budget.cli.main.main`
discovers them, so adding a command is adding a module. Built in: ``list``, ``play``, ``passkt``,
``report``, ``probe``, ``recovery``.

The top layer: it may import every room (evaluations, plug-ins, training, the study, the front door); nothing in the
package imports it but ``agentgym_budget/__main__.py``. Options shared by several commands live in
:mod:`~agentgym_budget.cli.common` (and :mod:`~agentgym_budget.cli.state_probes` for ``probe`` and ``recovery``).
"""

from __future__ import annotations

from agentgym_budget.cli.main import main as main

__all__: list[str] = []
