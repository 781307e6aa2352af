"""``python -m agentgym_budget`` runs the ``agentgym-budget`` command line."""

from __future__ import annotations

import sys

from agentgym_budget.cli.main import main

__all__: list[str] = []

if __name__ == "__main__":
    sys.exit(main())
