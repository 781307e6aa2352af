"""Scoring policies: a causal LM as a policy over the admissible commands (``score:MODEL``), TWOSOME / GLAM style.

* :mod:`~agentgym_budget.agents.scoring.prompt`: the policy's format and an episode's append-only prompt;
* :mod:`~agentgym_budget.agents.scoring.packing`: one forward pass for a prompt and all its candidates;
* :mod:`~agentgym_budget.agents.scoring.scorer`: candidates' token log-probs for many prompts, keys / values kept;
* :mod:`~agentgym_budget.agents.scoring.policy`: normalisation, temperature, epsilon and the seeded choice;
* :mod:`~agentgym_budget.agents.scoring.agent`: the ``score:MODEL`` agent.

Training these policies (SFT over the candidates, then policy-gradient RL) is :mod:`agentgym_budget.train.scoring`.
"""

__all__: list[str] = []
