# route: alfworld
import gymnasium as gym

import agentgym_budget  # noqa: F401  (registers the ids)

env = gym.make("agentgym_budget/ALFWorld-v0", split="valid_unseen", info_keys={"expert_action"})
obs, info = env.reset(seed=0)  # same seed, same task, same names, same trajectory
obs, reward, terminated, truncated, info = env.step(info["expert_action"])
