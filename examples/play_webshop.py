# route: webshop
import gymnasium as gym

import agentgym_budget  # noqa: F401  (registers the ids)

env = gym.make("agentgym_budget/WebShop-1k-v0", split="test", info_keys={"expert_plan"})
obs, info = env.reset(seed=0)  # info["admissible_actions"] == ["search[<keywords>]"]
print("instruction:", info["goal"])
for action in info["expert_plan"]:  # the reference solver's plan: search, open a product, pick options, buy
    obs, reward, terminated, truncated, info = env.step(action)
    print(">", action)
print(f"reward {reward:.2f} (1.00: the product, its options and the price match), terminated {terminated}")
