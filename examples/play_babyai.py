# route: babyai
"""Play every BabyAI id with minigrid's bot as the expert, and print the first view of one."""

import gymnasium as gym

import agentgym_budget
from agentgym_budget.wrappers import TurnBudget

for env_id in agentgym_budget.registered_ids("babyai"):
    env = TurnBudget(gym.make(env_id, split="test", info_keys={"expert_action"}), max_turns=64)
    obs, info = env.reset(seed=0)
    if env_id.endswith("MixedTestLocal-v0"):
        print(obs)
    terminated = truncated = False
    while not (terminated or truncated):
        obs, reward, terminated, truncated, info = env.step(info["expert_action"])
    print(f"{env_id}: {info['task_id']} won={info['won']} in {info['turn']} turns")
    assert info["won"], env_id
    env.close()
