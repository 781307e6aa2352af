# route: alfworld
import gymnasium as gym

import agentgym_budget  # noqa: F401  (registers the ids)

env = gym.make("agentgym_budget/ALFWorld-v0", split="valid_unseen", info_keys={"expert_action"}, max_turns=50)
obs, info = env.reset(seed=0)  # same seed, same task, same names, same trajectory
print("task:", info["goal"])
terminated = truncated = False
while not (terminated or truncated):  # the reference solver plays the whole task
    action = info["expert_action"]
    obs, reward, terminated, truncated, info = env.step(action)
    print(f"turn {info['turn']}: {action} -> {obs.splitlines()[0][:70]}")
print(f"won: {info['won']} in {info['turn']} of {info['max_turns']} turns, reward {reward}")
