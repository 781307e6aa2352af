# route: openenv
from agentgym_budget.integrations.openenv import RemoteSession, serve_in_thread
from agentgym_budget.integrations.session_config import SessionConfig

config = SessionConfig("TextWorld-CoinCollector-v0", env_kwargs="level=5", max_turns=20)
with serve_in_thread(config) as url, RemoteSession(url) as env:  # or a server: agentgym-budget serve ...
    obs = env.reset(seed=3, max_turns=10, show_budget=True)
    while not obs.done:
        obs = env.step("I should look around.\nAction: look")  # one reply, one turn
    print(obs.truncated, obs.turn, obs.text.splitlines()[-1])
