"""A reusable conformance suite for agentgym-budget environments (in the spirit of dm_env's test mixin).

Subclass :class:`EnvConformance` in a pytest module, set ``env_id`` (and
``env_kwargs`` if the id needs arguments), and pytest runs every check below on it::

    from agentgym_budget.testing import EnvConformance

    class TestCooking(EnvConformance):
        env_id = "agentgym_budget/TextWorld-Cooking-v0"
        env_kwargs = {"difficulty": 1}

Checks: Gymnasium's ``check_env``; the standard ``info`` keys and types (less the standard keys the
env leaves out, its ``omitted_info_keys``, which must then be absent); same seed ->
same task and trajectory; snapshot/restore equals a fresh replay (native and replay
modes); a snapshot's serialised form (and its pickle) restores into a new stack; ``TurnBudget``
truncation; fork independence; ``info["state_digest"]`` (forks agree, a round trip such as ``go east``
then ``go west`` comes back to its digest, different states differ: :mod:`~agentgym_budget.testing._digest`);
typed errors for non-string actions, steps after the end and unknown info keys; and hypothesis fuzzing
of actions (random unicode, control characters, backslashes, meta-commands, very long strings).
Actions are drawn from ``info["admissible_actions"]``; an env that omits that key (TextWorld's lean
mode) plays from :attr:`EnvConformance.fallback_actions` instead.
Needs ``pytest`` and ``hypothesis`` (the ``test`` extra).

May import: the wrappers, :mod:`agentgym_budget.core`, :mod:`agentgym_budget.snapshots` and
:mod:`agentgym_budget.errors` (it shares the tasks layer); only test suites import it.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any, ClassVar

import gymnasium as gym
from gymnasium.utils.env_checker import check_env

from agentgym_budget.core.info_keys import STANDARD_INFO_KEYS
from agentgym_budget.errors import EpisodeOverError, InvalidActionError, InvalidInfoKeyError
from agentgym_budget.testing._digest import Trip, check_state_digest, round_trips
from agentgym_budget.testing._play import (
    FALLBACK_ACTIONS,
    NASTY_ACTIONS,
    play_open_prefix,
    play_random,
    transition_key,
)
from agentgym_budget.wrappers import StateSnapshot, TurnBudget

__all__ = ["EnvConformance", "transition_key"]


class EnvConformance:
    """Conformance checks for one environment id; see the module docstring.

    Attributes:
        env_id: The id to test.
        env_kwargs: Extra arguments for ``gym.make``.
        seed: Seed of the episodes the checks play.
        steps: Random steps played before snapshots / comparisons.
        fuzz_examples: Hypothesis examples for the action fuzzer.
        keeping_action: An action that leaves the engine state as it is (its digest must not change).
        round_trip_required: Fail when the walk finds no round trip (:meth:`round_trips`) to check the
            digest with; ``False`` for worlds without one (a single room with nothing to undo).
    """

    env_id: ClassVar[str] = ""
    env_kwargs: ClassVar[dict[str, Any]] = {}
    seed: ClassVar[int] = 7
    steps: ClassVar[int] = 8
    fuzz_examples: ClassVar[int] = 60
    fallback_actions: ClassVar[tuple[str, ...]] = FALLBACK_ACTIONS
    keeping_action: ClassVar[str] = "inventory"
    round_trip_required: ClassVar[bool] = True

    def round_trips(self, info: dict[str, Any]) -> list[Trip]:
        """Round trips from the state of ``info``: ``(commands to a state, commands away and back)``.

        The default finds opposite moves (``go east`` / ``go west``), ``open`` / ``close``, two ``go to`` places
        and WebShop's ``next >`` / ``< prev``; override it for a family whose round trips are spelled otherwise.
        """
        return round_trips(info.get("admissible_actions") or ())

    def first_action(self, info: dict[str, Any]) -> str:
        """An action to play from ``info``: its first admissible action, else the first fallback action."""
        admissible = info.get("admissible_actions")
        return admissible[0] if admissible else self.fallback_actions[0]

    def make_env(self, **kwargs: Any) -> gym.Env:
        """Make the env under test (override for envs that need more than ``gym.make``)."""
        return gym.make(self.env_id, **{**self.env_kwargs, **kwargs})

    def _closing(self, *envs: gym.Env) -> Callable[[], None]:
        def close() -> None:
            for env in envs:
                env.close()

        return close

    # ------------------------------------------------------------------ gymnasium API
    def test_check_env(self) -> None:
        env = self.make_env()
        try:
            check_env(env.unwrapped)
        finally:
            env.close()

    def test_standard_info(self) -> None:
        env = self.make_env()
        try:
            obs, info = env.reset(seed=self.seed)
            omitted = frozenset(getattr(env.unwrapped, "omitted_info_keys", frozenset()))
            assert omitted <= {"admissible_actions"}, f"only admissible_actions may be omitted, not {omitted}"
            if "admissible_actions" in omitted:
                omitted |= {"action_is_valid"}  # admissibility is unknown without the admissible actions
            expected = set(STANDARD_INFO_KEYS) - omitted
            assert expected <= set(info), f"missing info keys: {expected - set(info)}"
            assert not omitted & set(info), f"omitted info keys present: {omitted & set(info)}"
            assert info["success"] is info["won"] and info.get("action_is_valid", True) is True
            if "admissible_actions" not in omitted:
                assert isinstance(info["admissible_actions"], list) and info["admissible_actions"]
                assert all(isinstance(a, str) for a in info["admissible_actions"])
            assert isinstance(info["won"], bool) and isinstance(info["lost"], bool)
            assert 0.0 <= info["progress"] <= 1.0
            assert info["task_id"] in env.unwrapped.task_ids
            assert isinstance(info["goal"], str)
            obs, reward, terminated, truncated, info = env.step(self.first_action(info))
            assert env.observation_space.contains(obs)
            assert isinstance(reward, float) and isinstance(terminated, bool) and truncated is False
            assert expected <= set(info) and not omitted & set(info)
            assert info["success"] is info["won"] and info.get("action_is_valid", True) is True
            if not terminated and "action_is_valid" in info:
                info = env.step("zzqx is not a command 12345")[-1]
                assert info["action_is_valid"] is False
        finally:
            env.close()

    def test_optional_info_keys(self) -> None:
        keys = set(self.make_env().unwrapped.optional_info_keys)
        env = self.make_env(info_keys=keys)
        try:
            _, info = env.reset(seed=self.seed)
            after = env.step(self.first_action(info))[-1]
            for current in (info, after):
                assert keys <= set(current), f"requested info keys missing: {keys - set(current)}"
                json.dumps(current)
        finally:
            env.close()

    def test_same_seed_same_trajectory(self) -> None:
        first, second = self.make_env(), self.make_env()
        try:
            runs = []
            for env in (first, second, first):
                obs, info = env.reset(seed=self.seed)
                runs.append(
                    (
                        obs,
                        sorted(info.items()),
                        play_random(env, self.steps, random.Random(1), info, self.fallback_actions),
                    )
                )
                env.reset(seed=self.seed + 1)
            assert runs[0] == runs[1], "two envs reset with the same seed played differently"
            assert runs[0] == runs[2], "the same seed played differently after another episode"
        finally:
            self._closing(first, second)()

    def test_explicit_task_option(self) -> None:
        env = self.make_env()
        try:
            task = env.unwrapped.task_ids[-1]
            _, info = env.reset(options={"task": task})
            assert info["task_id"] == task
        finally:
            env.close()

    # ------------------------------------------------------------------ snapshots
    def _check_snapshot_equals_replay(self, mode: str) -> None:
        env = StateSnapshot(TurnBudget(self.make_env(), max_turns=100), mode=mode)
        fresh = TurnBudget(self.make_env(), max_turns=100)
        try:
            prefix, info = play_open_prefix(env, self.seed, self.steps, random.Random(3), self.fallback_actions)
            snap = env.snapshot()
            suffix = play_random(env, self.steps, random.Random(4), info, self.fallback_actions)
            assert suffix, "no continuation was played"
            for _ in range(2):
                env.restore(snap)
                again = [(action, transition_key(env.step(action))) for action, _ in suffix]
                assert again == suffix, "restore did not reproduce the continuation"
            fresh.reset(seed=self.seed)
            replay = [(action, transition_key(fresh.step(action))) for action, _ in prefix + suffix]
            assert replay == prefix + suffix, "a fresh replay differs from the restored continuation"
        finally:
            self._closing(env, fresh)()

    def test_snapshot_restore_equals_replay(self) -> None:
        self._check_snapshot_equals_replay("auto")

    def test_replay_snapshot_equals_replay(self) -> None:
        self._check_snapshot_equals_replay("replay")

    def test_serialised_snapshot_restores_into_a_new_stack(self) -> None:
        import pickle

        from agentgym_budget.snapshots.state import EnvState

        env = StateSnapshot(TurnBudget(self.make_env(), max_turns=100))
        other = StateSnapshot(TurnBudget(self.make_env(), max_turns=100))
        try:
            _, info = play_open_prefix(env, self.seed, self.steps, random.Random(6), self.fallback_actions)
            snap = env.snapshot()
            data = snap.to_bytes()
            suffix = play_random(env, self.steps, random.Random(7), info, self.fallback_actions)
            assert suffix, "no continuation was played"
            again = EnvState.from_bytes(data)
            assert again == snap and hash(again) == hash(snap), "the serialised snapshot is not equal to the snapshot"
            assert pickle.loads(pickle.dumps(snap)) == snap, "the pickled snapshot is not equal to the snapshot"
            other.restore(again)
            replayed = [(action, transition_key(other.step(action))) for action, _ in suffix]
            assert replayed == suffix, "the deserialised snapshot did not reproduce the continuation"
            other.restore(again)
            assert other.snapshot().to_bytes() == data, "a restored snapshot serialises differently"
        finally:
            self._closing(env, other)()

    def test_fork_independence(self) -> None:
        env = StateSnapshot(TurnBudget(self.make_env(), max_turns=50))
        forks: list[gym.Env] = []
        try:
            _, info = play_open_prefix(env, self.seed, 3, random.Random(5), self.fallback_actions)
            action = self.first_action(info)
            turn = env.get_wrapper_attr("turn")
            forks = env.fork(3)
            stepped = transition_key(forks[0].step(action))
            assert [fork.get_wrapper_attr("turn") for fork in forks] == [turn + 1, turn, turn]
            assert transition_key(forks[1].step(action)) == stepped, "forks at one state diverged"
            assert transition_key(env.step(action)) == stepped, "a fork's step changed the original env"
            assert len({id(fork.unwrapped) for fork in forks} | {id(env.unwrapped)}) == 4
        finally:
            self._closing(env, *forks)()

    def test_state_digest(self) -> None:
        configured = set(self.env_kwargs.get("info_keys") or ())

        def make(info_keys: set[str] = frozenset()) -> gym.Env:  # the requested keys beside the configured ones
            return self.make_env(**({"info_keys": configured | set(info_keys)} if configured or info_keys else {}))

        checked, listed = check_state_digest(
            make,
            seed=self.seed,
            steps=self.steps,
            keeping_action=self.keeping_action,
            trips=self.round_trips,
            fallback=self.fallback_actions,
        )
        if self.round_trip_required and listed:
            assert checked, "the walk found no round trip to check state_digest with (see round_trips)"

    def test_turn_budget_truncation(self) -> None:
        env = TurnBudget(self.make_env(), max_turns=3)
        try:
            _, info = env.reset(seed=self.seed)
            assert (info["turn"], info["max_turns"], info["turns_left"]) == (0, 3, 3)
            flags = []
            for _ in range(3):
                _, _, terminated, truncated, info = env.step("look")
                flags.append((terminated, truncated))
                if terminated:
                    break
            if not flags[-1][0]:
                assert flags == [(False, False), (False, False), (False, True)]
                assert info["turns_left"] == 0
                try:
                    env.step("look")
                except EpisodeOverError:
                    pass
                else:
                    raise AssertionError("step after truncation did not raise EpisodeOverError")
            _, info = env.reset(seed=self.seed, options={"max_turns": 1})
            _, _, terminated, truncated, _ = env.step("look")
            assert truncated != terminated
        finally:
            env.close()

    # ------------------------------------------------------------------ errors
    def test_typed_errors(self) -> None:
        env = self.make_env()
        try:
            env.reset(seed=self.seed)
            for bad in (None, 3, b"look", ["look"]):
                try:
                    env.step(bad)
                except InvalidActionError:
                    continue
                raise AssertionError(f"step({bad!r}) did not raise InvalidActionError")
        finally:
            env.close()
        try:
            self.make_env(info_keys={"no_such_key"})
        except InvalidInfoKeyError:
            pass
        else:
            raise AssertionError("an unknown info key did not raise InvalidInfoKeyError")

    def test_nasty_actions_are_normal_turns(self) -> None:
        env = StateSnapshot(self.make_env())
        try:
            _, info = env.reset(seed=self.seed)
            snap = env.snapshot()
            baseline = transition_key(env.step(self.first_action(info)))
            for action in NASTY_ACTIONS:
                env.restore(snap)
                result = transition_key(env.step(action))
                assert env.observation_space.contains(result[0]), f"{action[:20]!r}: observation outside the space"
                env.restore(snap)
                assert transition_key(env.step(action)) == result, f"{action[:20]!r} is not deterministic"
                env.restore(snap)
                assert transition_key(env.step(self.first_action(info))) == baseline
        finally:
            env.close()

    def test_fuzz_actions(self) -> None:
        from hypothesis import HealthCheck, given, settings
        from hypothesis import strategies as st

        env = StateSnapshot(self.make_env())
        try:
            _, info = env.reset(seed=self.seed)
            snap = env.snapshot()
            probe = self.first_action(info)
            baseline = transition_key(env.step(probe))
            actions = st.one_of(
                st.text(max_size=300),
                st.text(alphabet=st.characters(codec="ascii"), max_size=50),
                st.sampled_from(NASTY_ACTIONS),
                st.builds(lambda a, b: a + b, st.sampled_from(NASTY_ACTIONS), st.text(max_size=20)),
                st.integers(200, 12_000).map(lambda n: "take " * (n // 5)),
            )

            @settings(
                max_examples=self.fuzz_examples,
                deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
                derandomize=True,
            )
            @given(actions)
            def fuzz(action: str) -> None:
                env.restore(snap)
                obs, reward, *_ = env.step(action)
                assert env.observation_space.contains(obs)
                assert isinstance(reward, float)
                env.restore(snap)
                assert transition_key(env.step(probe)) == baseline, "the env state drifted after a fuzzed action"

            fuzz()
        finally:
            env.close()
