# route: sciworld
"""Play a variation of four ScienceWorld tasks with their gold paths (needs Java: apt-get install default-jre-headless)."""

import gymnasium as gym

import agentgym_budget  # noqa: F401  (registers the ids)
from agentgym_budget.wrappers import TurnBudget

for task in ["1-1", "3-1", "4-4", "6-1"]:  # boil, power a component, find an animal, mix a chemical
    env = TurnBudget(gym.make("agentgym_budget/ScienceWorld-v0", task=task, info_keys={"expert_action"}), 200)
    obs, info = env.reset(seed=0)
    progress = [info["progress"]]
    while not info["won"]:
        obs, reward, terminated, truncated, info = env.step(info["expert_action"])
        progress.append(info["progress"])
        assert not truncated and not info["lost"], (task, info["turn"])
    print(f"{info['task_id']}: won in {info['turn']} turns, progress {' '.join(f'{p:.2f}' for p in progress[::4])}")
    env.close()
