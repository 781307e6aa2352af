"""Rollouts in Ray actors: one snapshot shipped once, continued in several actors like in-process forks."""

from __future__ import annotations

import pytest

from agentgym_budget.agents import parse_agent
from agentgym_budget.errors import InvalidOptionError, SnapshotMismatchError
from agentgym_budget.integrations.ray_rollouts import (
    Continuation,
    ForkPoint,
    Rollout,
    RolloutConfig,
    play_forks,
    play_from,
    rollout_actors,
)
from agentgym_budget.runner.rollout import agent_view
from agentgym_budget.snapshots import codec as snapshot_codec
from tests.ray_support import ray_cluster, wait_for_free_cpus

__all__ = ["ray_cluster"]

CONFIG = RolloutConfig(
    "TextWorld-CoinCollector-v0", env_kwargs="level=10", max_turns=14, info_keys=("expert_action", "expert_plan")
)
CONTINUATIONS = [
    Continuation(agent="expert"),
    Continuation(agent="noisy-expert-recover:eps=0.5", seed=1),
    Continuation(agent="noisy-expert-recover:eps=0.5", seed=2),
    Continuation(agent="random", seed=3),
    Continuation(actions=("look", "inventory", "go north")),
]


def _fork_point() -> tuple[object, ForkPoint]:
    env = CONFIG.make()
    observation, info = env.reset(seed=4, options={"task": CONFIG.ref.task_ids()[1]})
    for _ in range(2):
        observation, _, _, _, info = env.step(info["expert_action"])
    return env, ForkPoint.take(env, observation, info)


def _play_fork_by_hand(fork, point: ForkPoint, continuation: Continuation) -> Rollout:
    """The continuation on an in-process fork (no restore, nothing shared with ``play_from``'s loop)."""
    info, observation = dict(point.info), point.observation
    rollout = Rollout(start_turn=info["turn"], turn=info["turn"])
    agent = None
    if continuation.agent is not None:
        agent = parse_agent(continuation.agent).build()
        agent.reset(info["goal"], observation, agent_view(info, False), seed=continuation.seed, budget=None)
    script = list(continuation.actions or ())
    while agent is not None or script:
        action = agent.act(observation, agent_view(info, False)) if agent is not None else script.pop(0)
        observation, reward, terminated, truncated, info = fork.step(action)
        rollout.actions.append(action)
        rollout.observations.append(observation)
        rollout.rewards.append(reward)
        rollout.terminated, rollout.truncated = terminated, truncated
        if terminated or truncated:
            break
    rollout.won, rollout.lost, rollout.turn, rollout.progress = (
        info["won"],
        info["lost"],
        info["turn"],
        info["progress"],
    )
    rollout.agent_stats = dict(agent.stats()) if agent is not None and hasattr(agent, "stats") else {}
    return rollout


def test_configs_and_continuations_are_validated() -> None:
    with pytest.raises(InvalidOptionError, match="not neither"):
        Continuation()
    with pytest.raises(InvalidOptionError, match="one weight per budget"):
        RolloutConfig("TextWorld-CoinCollector-v0", budgets=(5, 10), budget_weights=(1.0,))
    env, point = _fork_point()
    try:
        with pytest.raises(InvalidOptionError, match=r"needs the info keys \['expert_action'\].*info_keys"):
            play_from(
                RolloutConfig("TextWorld-CoinCollector-v0", env_kwargs="level=10").make(), point, CONTINUATIONS[0]
            )
        other = RolloutConfig("TextWorld-CoinCollector-v0", env_kwargs="level=3", max_turns=14).make()
        with pytest.raises(SnapshotMismatchError):  # a state of another game
            play_from(other, point, CONTINUATIONS[-1])
    finally:
        env.close()


@pytest.mark.slow
def test_a_fork_of_one_state_plays_in_several_actors_as_in_process_forks(ray_cluster, monkeypatch) -> None:
    env, point = _fork_point()
    forks = env.fork(len(CONTINUATIONS))
    here = [_play_fork_by_hand(fork, point, c) for fork, c in zip(forks, CONTINUATIONS, strict=True)]
    assert here[0].won and not here[3].won and here[4].actions == ["look", "inventory", "go north"]
    assert len({tuple(r.actions) for r in here}) == len(here), "the continuations must differ to test anything"
    assert all(r.start_turn == 2 for r in here)

    # Put once, read back from the object store: the snapshot's buffer arrives read-only and restores.
    decoded = []
    decode = snapshot_codec.decode
    monkeypatch.setattr(
        snapshot_codec, "decode", lambda data: decoded.append(memoryview(data).readonly) or decode(data)
    )
    shared = ray_cluster.put(point)
    env.restore(ray_cluster.get(shared).snapshot)
    assert decoded == [True]

    actors = rollout_actors(CONFIG, 2)
    try:
        on_ray = play_forks(CONFIG, point, CONTINUATIONS, actors=actors)
        pids = set(
            ray_cluster.get([actor.__ray_call__.remote(lambda self: __import__("os").getpid()) for actor in actors])
        )
    finally:
        for actor in actors:
            ray_cluster.kill(actor)
    assert [r.to_json() for r in on_ray] == [r.to_json() for r in here]
    assert len(pids) == 2  # two actor processes played them
    assert [r.to_json() for r in play_forks(CONFIG, point, CONTINUATIONS[:2], actors=1)] == [
        r.to_json() for r in here[:2]
    ]
    env.close()
    wait_for_free_cpus()
