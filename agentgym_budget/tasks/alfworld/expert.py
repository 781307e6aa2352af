"""ALFWorld's handcoded expert, fed every transition and seeded, with copyable state.

ALFWorld ships two experts: the planner (Fast Downward's plan from the current state; see
:meth:`~.engine.AlfworldEngine.plan`) and a handcoded one, ``HandCodedTWAgent``
(``alfworld.agents.expert``), a per-task-type policy that explores receptacles and tracks
what it has seen. The handcoded expert needs ALFRED's ``traj_data.json`` beside the game and
the facts of each state, and it remembers the episode, so it must observe every transition.

:class:`HandcodedExpert` drives it as ALFWorld's ``AlfredExpert`` wrapper does (observe the
first observation, then ``act`` on each new state with the previous command; a suggestion
that is not admissible becomes ``"look"``), with two differences: its random choices use a
generator seeded by the episode seed instead of the global ``random``, and when the expert
gives up (``HandCodedAgentFailed`` / ``HandCodedAgentTimeout``) it suggests nothing instead of
raising. :meth:`HandcodedExpert.copy` snapshots it.

Example:
    >>> from agentgym_budget.tasks.alfworld.engine import AlfworldEngine
    >>> from agentgym_budget.tasks.alfworld.env import ALFWorldEnv
    >>> game = ALFWorldEnv("pick_and_place_simple", num_games=1)._game_path("pick_and_place_simple-0")
    >>> engine = AlfworldEngine(facts=True)
    >>> engine.load(game)
    >>> expert = HandcodedExpert(game, seed=0)
    >>> expert.observe_reset(engine.reset(0))
    'look'
    >>> expert.observe_step(engine.step("look"), "look").startswith("go to ")
    True
    >>> engine.close()
"""

from __future__ import annotations

import copy
import random
from collections.abc import Mapping
from typing import Any

from agentgym_budget.tasks.alfworld.engine import seeded_global_random

__all__: list[str] = []


class HandcodedExpert:
    """ALFWorld's ``HandCodedTWAgent`` on one episode.

    Args:
        game_path: The game's ``game.tw-pddl`` (its ``traj_data.json`` must lie beside it).
        seed: Seed of the expert's random choices (the episode seed).
        max_steps: Steps after which the expert gives up (ALFWorld uses 200).
    """

    def __init__(self, game_path: str, seed: int, *, max_steps: int = 200) -> None:
        from alfworld.agents.expert import HandCodedTWAgent

        self._agent = HandCodedTWAgent(max_steps=max_steps)
        self._agent.reset(game_path)
        self._random_state = random.Random(seed).getstate()
        self.action: str | None = "look"

    def observe_reset(self, state: Mapping[str, Any]) -> str | None:
        """Feed the first state of the episode; return the suggested action."""
        self._agent.observe(state["feedback"])
        self.action = "look"
        return self.action

    def observe_step(self, state: Mapping[str, Any], command: str) -> str | None:
        """Feed the state reached by ``command``; return the suggested action (``None`` if the expert gave up)."""
        from alfworld.agents.expert import HandCodedAgentFailed, HandCodedAgentTimeout

        if self.action is None:
            return None
        with seeded_global_random(self._random_state) as final:
            try:
                suggestion = self._agent.act(state, 0, state["won"], command)
            except (HandCodedAgentFailed, HandCodedAgentTimeout):
                suggestion = None
        self._random_state = final[0]
        if suggestion is None:
            self.action = None
        else:
            self.action = suggestion if suggestion in state["admissible_commands"] else "look"
        return self.action

    def copy(self) -> HandcodedExpert:
        """An independent copy (for snapshots)."""
        twin = HandcodedExpert.__new__(HandcodedExpert)
        twin._agent = copy.deepcopy(self._agent)
        twin._random_state = self._random_state
        twin.action = self.action
        return twin
