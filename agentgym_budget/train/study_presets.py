"""Named sizes of the study: ``smoke`` (the tests' end-to-end run), ``quick``, ``default``, ``full`` and ``smollm2``.

``smoke`` and ``quick`` show the pipeline on the tiny base (``quick`` in minutes, with enough of every stage to
read its outputs); their ``study.md`` says in its first lines that they decide nothing (fewer than 32 test
tasks and 2 training seeds per arm: :func:`~agentgym_budget.train.study_report.scope_lines`).

A preset fixes the evaluation sizes, the number of training seeds per RL recipe, the training
steps and (``grpo``) GRPO settings the ``--rl-*`` flags override; everything else (task, budgets, arms,
workers, seed) stays as given. ``default`` is sized for
the claims' headline contrasts (16 episodes per task and budget, 3 training seeds per RL arm) with the
default arms (fixed, budgetmix, curriculum), on the base SFT makes from masked demonstrations
(the noisy expert's wins, its errors left out of the loss). Its first run, on the clean expert's
demonstrations, did not fit 90 minutes: that base answered with format debris after its first slip and
wrote to the token limit every turn (5.6 s an episode; Pass@1 0.03-0.06 at every budget), so the
Pass@(K,T) grid alone would have taken about 5 hours. The masked base plays an episode in about 0.3 s
(2 workers) and leaves the budgets room (Pass@1 0.05 at T=3 to 0.41 at T=9 after 350 steps, 16 test
tasks x 4 episodes). docs/study.md gives the default run's stage times.

``default`` and ``full`` train with 16 rollouts a GRPO step in 2 groups of 8 (the library default is 8 in
2 groups of 4). The three fixed runs of the 2026-12-04 default run (8 rollouts) ended with Δ(9) - Δ(3) of
+0.003, +0.017 and -0.080 (standard deviation 0.052); those of the 2026-12-05 one (16 rollouts, from an SFT
base made by the same recipe) with -0.019, +0.007 and +0.009 (0.016), for about 1.5x the training time
(4.7-5.2 instead of 2.9-3.6 CPU minutes a run; docs/study.md).
That spread between training seeds widens every RL claim's interval, and more evaluation episodes cannot shrink it.

With that spread small, ``default``'s evaluation is sized for the 0.05 half-width of every measured claim,
scaled from the 2026-12-05 run's half-widths as 1/sqrt(size): 56 test tasks (20 gave ``budget_dependence``
0.074; 56 gave 0.049), 100 probe episodes (30 kept 32 probe states, ``single_step`` 0.068; 100 kept 86,
0.040) and 144 recovery states (16 gave ``recovery`` 0.125, 112 gave 0.054, 144 gave 0.049). One
uninterrupted run on a quiet 2-core machine took 79.7 minutes of wall time, 113.2 of CPU: training 45 on
one thread, evaluation 68 on two workers (docs/study.md gives the stage times).

Task (the study's default, Coin Collector level 3): the expert's route is 3 turns on all 16 test
tasks checked (level 5: 5; level 10: 10; Cooking difficulty 1: 3, and its progress moves, 0 -> 0.33
after the first step, where Coin Collector's stays 0). docs/study.md gives the base policy's
Pass@(1,T) curves behind the choice.

``smollm2`` runs every stage on SmolLM2-135M-Instruct (``train_preset``: the base model, SFT and
GRPO settings of ``train --preset smollm2``; the RL recipes start from its SFT model and the three
checkpoints are evaluated as ``hf:DIR`` agents). Sized for <= 3 hours on a quiet 2-core machine,
estimated from per-stage costs measured on the 2-core CPU (CPU seconds, which a quiet machine turns
into wall seconds; training runs on one thread, evaluation in two worker processes):

* SFT: ~55-60 CPU s a step (4 demonstrations, ~3,060 tokens: 51-56 tokens/s; 10 steps measured) -> 30 steps ~ 1,800 s;
* GRPO: ~240 s a step with margin (measured at budget 4 from the 10-step SFT model: 2 steps of 4
  rollouts, 2,000-2,100 tokens a step, 134-144 s wall a step at load ~3, 289 CPU s for the whole
  run with loading, 12.8 GB peak; longer budgets make longer rollouts) -> 2 recipes x 12 steps ~ 5,760 s;
* evaluation: ~15 CPU s an episode with margin (measured after 10 SFT steps: 16 episodes at T=8, 70 turns
  of ~30-token replies, 155 CPU s with both workers' model loading; zero-shot 8-turn episodes of
  48-token prose replies: 17.5 CPU s) -> 3 agents x 16 tasks x 4 episodes
  (prefix mode: one episode serves every budget) / 2 workers ~ 1,440 s; probes ~ 150 s;
* loading, demonstrations and games ~ 300 s.

Total ~ 9,450 s ~ 2.6 h. Recovery probes are skipped (``--recovery-states 10`` adds ~ 40 min);
12 RL steps are few: the preset shows that the pipeline runs on a real pretrained base, not that
RL converged. A reduced run (one fixed arm at T=4, 10 SFT steps, 2026-12-05, load 1-4; docs/study.md)
measured SFT 84 CPU s a step (demonstrations included, another study beside it: above the estimate),
GRPO 106 s a step, evaluation 9.3 CPU s an episode and 8 recovery states in 26 CPU min (within it).

Example:
    >>> preset_settings("smoke")["eval_samples"]
    2
    >>> preset_settings("default")["training_seeds"]
    3
    >>> preset_settings("default")["grpo"]
    {'episodes_per_step': 16, 'num_generations': 8}
    >>> preset_settings("smollm2")["train_preset"]
    'smollm2'
"""

from __future__ import annotations

from typing import Any

from agentgym_budget.errors import InvalidOptionError

__all__ = ["preset_settings"]

_GROUPS_OF_8 = {"episodes_per_step": 16, "num_generations": 8}

PRESETS: dict[str, dict[str, Any]] = {
    "smoke": {
        "eval_tasks": 2,
        "eval_samples": 2,
        "eval_ks": (1, 2),
        "probe_states": 2,
        "recovery_states": 1,
        "training_seeds": 1,
        "sft_steps": 4,
        "rl_steps": 2,
        "train_tasks": 4,
    },
    "quick": {
        "eval_tasks": 8,
        "eval_samples": 4,
        "eval_ks": (1, 2),
        "probe_states": 6,
        "recovery_states": 4,
        "training_seeds": 1,
        "sft_steps": 100,
        "rl_steps": 6,
        "train_tasks": 40,
    },
    "default": {
        "eval_tasks": 56,
        "eval_samples": 16,
        "eval_ks": (1, 2, 4),
        "probe_states": 100,
        "recovery_states": 144,
        "training_seeds": 3,
        "sft_steps": 350,
        "rl_steps": 50,
        "train_tasks": 100,
        "grpo": _GROUPS_OF_8,
    },
    "full": {
        "eval_tasks": 60,
        "eval_samples": 32,
        "eval_ks": (1, 2, 4, 8),
        "probe_states": 200,
        "recovery_states": 200,
        "training_seeds": 5,
        "sft_steps": 700,
        "rl_steps": 120,
        "train_tasks": 200,
        "grpo": _GROUPS_OF_8,
    },
    "smollm2": {
        "train_preset": "smollm2",
        "eval_tasks": 16,
        "eval_samples": 4,
        "eval_ks": (1, 2, 4),
        "probe_states": 10,
        "recovery_states": 0,
        "training_seeds": 1,
        "sft_steps": 30,
        "rl_steps": 12,
        "train_tasks": 60,
    },
}
"""Sizes of each preset."""


def preset_settings(name: str) -> dict[str, Any]:
    """A copy of the sizes of preset ``name`` (``train_preset``: the ``train --preset`` whose model and settings the
    study trains with, if any; ``grpo``: GRPO settings over those).

    Raises:
        InvalidOptionError: An unknown preset.
    """
    if name not in PRESETS:
        raise InvalidOptionError(f"Unknown study preset {name!r}; presets are {', '.join(PRESETS)}.")
    settings = dict(PRESETS[name])
    if "grpo" in settings:
        settings["grpo"] = dict(settings["grpo"])
    return settings
