"""ScienceWorld task family: the 30 science tasks of ScienceWorld (Wang et al., EMNLP 2022), in its simulator.

One id, ``agentgym_budget/ScienceWorld-v0``; ``task=`` picks tasks by name (``"boil"``) or paper id
(``"1-1"``), several at once, or all 30 (the default), and ``simplifications=`` the engine's
simplifications (:mod:`.catalog`). Splits are the engine's ``train`` / ``dev`` / ``test`` variations.
Needs the ``sciworld`` extra (``scienceworld``) and a Java runtime (``apt-get install
default-jre-headless``). Importing this module registers the id without importing the engine.

Example:
    >>> import agentgym_budget
    >>> agentgym_budget.registered_ids("sciworld")
    ['agentgym_budget/ScienceWorld-v0']
"""

from __future__ import annotations

from agentgym_budget.registration import declare_engine, register_env
from agentgym_budget.tasks.sciworld.catalog import SPLITS

__all__: list[str] = []  # importing the module registers the id


def register() -> None:
    """Register the ScienceWorld id with Gymnasium."""
    declare_engine("sciworld", ("scienceworld", "py4j"), runtime=java_runtime)
    register_env(
        "ScienceWorld-v0",
        "agentgym_budget.tasks.sciworld.env:ScienceWorldEnv",
        family="sciworld",
        description="ScienceWorld's 30 science tasks (boil, find an animal, build a circuit, ...); task= picks",
        splits=SPLITS,
        extra="sciworld",
        requires=("scienceworld", "py4j"),
        programs=("java",),
    )


def java_runtime() -> dict[str, str | None]:
    """The Java runtime the ScienceWorld id starts (its ``java -version`` line and path), for run provenance."""
    from agentgym_budget.tasks._jvm import java_runtime as runtime

    return runtime("ScienceWorld (the ScienceWorld ids)")


register()
