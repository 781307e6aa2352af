# route: twx
"""Play every TextWorldExpress id with its gold path (needs Java: apt-get install default-jre-headless)."""

import gymnasium as gym

import agentgym_budget
from agentgym_budget.wrappers import TurnBudget

for env_id in agentgym_budget.registered_ids("twx"):
    env = TurnBudget(gym.make(env_id, split="test", info_keys={"expert_action"}), max_turns=100)
    obs, info = env.reset(seed=0)
    total, terminated, truncated = 0.0, False, False
    while not (terminated or truncated):
        obs, reward, terminated, truncated, info = env.step(info["expert_action"])
        total += reward
    print(f"{env_id}: {info['task_id']} won={info['won']} return={total:.2f} in {info['turn']} turns")
    assert info["won"], env_id
    env.close()
