"""Training scoring policies (``train --policy score``): SFT over the candidates, then RL on their distribution.

The policy is the ``score:`` agent's (:mod:`agentgym_budget.agents.scoring`): a causal LM's softmax over the
admissible commands' normalised log-likelihoods. Its training reuses the generation path's recipes, budgets,
curriculum, process reward, credit, rollout modes and dynamic sampling, and replaces what decoding made
expensive:

* :mod:`~agentgym_budget.train.scoring.settings`: which weights train, PPO's epochs and clip, exploration;
* :mod:`~agentgym_budget.train.scoring.weights`: the trained weights (top N blocks, all, or LoRA), the reference
  policy, checkpoints;
* :mod:`~agentgym_budget.train.scoring.episodes`: groups played in lockstep, one scoring pass per turn;
* :mod:`~agentgym_budget.train.scoring.update`: the candidates' distribution through the trained blocks only,
  group-relative advantages, PPO clipping, KL to the reference;
* :mod:`~agentgym_budget.train.scoring.sft`: cross-entropy over the candidates on demonstrations;
* :mod:`~agentgym_budget.train.scoring.run`: the phases, logs and resume.
"""

__all__: list[str] = []
