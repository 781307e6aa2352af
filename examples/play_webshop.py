# route: webshop
import gymnasium as gym

import agentgym_budget  # noqa: F401  (registers the ids)

env = gym.make("agentgym_budget/WebShop-1k-v0", split="test", info_keys={"expert_plan"})
obs, info = env.reset(seed=0)  # info["admissible_actions"] == ["search[<keywords>]"]
obs, reward, terminated, truncated, info = env.step("search[women's midi dress v-neck]")
