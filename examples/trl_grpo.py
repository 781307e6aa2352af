# route: trl
import torch
from datasets import Dataset
from trl import GRPOConfig

from agentgym_budget.integrations.session_config import SessionConfig
from agentgym_budget.integrations.trl import dataset_rows, grpo_trainer
from agentgym_budget.train.tiny_lm import warm_tiny_lm

torch.set_num_threads(1)  # a model this small runs fastest on one thread
config = SessionConfig("TextWorld-CoinCollector-v0", env_kwargs="level=5", budgets=(2, 6))
model, tokenizer, _ = warm_tiny_lm(config)  # or any local causal LM whose chat template supports tools
args = GRPOConfig(
    output_dir="runs/grpo",
    max_steps=1,
    per_device_train_batch_size=4,
    num_generations=2,
    max_tool_calling_iterations=6,
    max_completion_length=512,
    temperature=0.7,
    use_cpu=True,
)
trainer = grpo_trainer(model, tokenizer, config, args, Dataset.from_list(dataset_rows(config, episodes=8)))
trainer.train()
print([(env.record["budget"], env.record["turns"], env.record["truncated"]) for env in trainer.environments])
