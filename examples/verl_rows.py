# route: verl
from agentgym_budget.integrations.session_config import SessionConfig
from agentgym_budget.integrations.verl import AGENT_LOOP_CONFIG, register_agent_loop
from agentgym_budget.integrations.verl_data import verl_rows, write_parquet

# BudgetMix rows: each row's budget is drawn from its seed, so a GRPO group (same row) shares it
config = SessionConfig("TextWorld-CoinCollector-v0", env_kwargs="level=5", budgets=(5, 10, 20))
rows = verl_rows(config, episodes=8)
path = write_parquet(rows, "coin_train.parquet")  # data.train_files=coin_train.parquet
name = register_agent_loop()  # done on import too; verl's Ray workers load it as a verl.plugins entry point
print(name, path, len(rows), "rows, seeds", [row["extra_info"]["seed"] for row in rows], AGENT_LOOP_CONFIG)
