# route: skyrl
import skyrl_gym

from agentgym_budget.integrations.skyrl import register_skyrl_env

register_skyrl_env()  # "agentgym_budget"; a second call is a no-op, an id taken by another env is refused
env = skyrl_gym.make(
    "agentgym_budget",
    env_config={"env_id": "WebShop-1k-v0", "max_turns": 15, "budgets": [5, 10, 15]},
    extras={"extra_info": {"seed": 7, "max_turns": 10}},
)
prompt, _ = env.init([{"role": "user", "content": ""}])
out = env.step("<think>...</think>\nAction: search[red dress]")  # observations, reward, done, metadata
