"""Training LLM agents on the suite's environments (extra ``trl``): ``agentgym-budget train``.

One module per concept, each importing torch / transformers / TRL only when used:

* :mod:`~agentgym_budget.chat.format`: the chat format saved beside the weights (``agentgym_chat.json``)
  and conversations as token ids exactly as TRL's GRPO builds them (read by ``hf:PATH`` agents);
* :mod:`~agentgym_budget.train.trajectories`: scripted agents' episodes as tool-calling conversations;
* :mod:`~agentgym_budget.train.base_model`: the built-in tiny causal LM and tokenizer (built locally), or
  any local Hugging Face causal LM;
* :mod:`~agentgym_budget.train.sft`: supervised fine-tuning with TRL's ``SFTTrainer``;
* :mod:`~agentgym_budget.train.grpo`: multi-turn GRPO with TRL's ``GRPOTrainer(environment_factory=...)``;
* :mod:`~agentgym_budget.train.device` and :mod:`~agentgym_budget.train.train_presets`: where training runs
  (CPU by default; one CUDA GPU, bf16, vLLM colocate generation) and the ``gpu-qwen2.5`` preset;
* :mod:`~agentgym_budget.train.metrics` and :mod:`~agentgym_budget.train.report`: logs, summary, plot;
* :mod:`~agentgym_budget.train.config` and :mod:`~agentgym_budget.train.recipe`: what to train (the recipes
  ``sft``, ``fixed``, ``budgetmix``, ``curriculum``) and how a run executes, with its layout.

The study, which trains these recipes and then evaluates them, is the floor above: :mod:`agentgym_budget.study`.

May import every room below the study: :mod:`agentgym_budget.eval`, :mod:`agentgym_budget.integrations`,
:mod:`agentgym_budget.runner`, :mod:`agentgym_budget.agents`, :mod:`agentgym_budget.chat`,
:mod:`agentgym_budget.stats` and the layers below. The study and the CLI import it.
"""

__all__: list[str] = []
