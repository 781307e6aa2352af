"""Registration: every id makes, did-you-mean errors, use from code that never imported the package."""

from __future__ import annotations

import subprocess
import sys

import gymnasium as gym
import pytest

import agentgym_budget
from agentgym_budget.core.env import TextEnv
from agentgym_budget.errors import UnknownEnvIdError
from tests.test_conformance import SPECIAL_KWARGS

IDS = agentgym_budget.registered_ids()


@pytest.mark.parametrize("env_id", IDS)
def test_every_id_makes_a_text_env(env_id):
    env = gym.make(env_id, **SPECIAL_KWARGS.get(env_id, dict)())
    try:
        assert isinstance(env.unwrapped, TextEnv)
        assert env.spec.id == env_id
        assert env.unwrapped.task_ids
        info = agentgym_budget.env_info(env_id)
        assert info.family and info.description and env.unwrapped.split in info.splits
    finally:
        env.close()


@pytest.mark.parametrize("env_id", IDS)
def test_every_spec_survives_json_and_pickle_with_its_entry_points(env_id):
    import pickle

    from gymnasium.envs.registration import EnvSpec

    from agentgym_budget.registration import _CATALOG, EnvEntryPoint, VectorEntryPoint

    spec = gym.spec(env_id)
    for copy in (EnvSpec.from_json(spec.to_json()), pickle.loads(pickle.dumps(spec))):
        assert (copy.entry_point, copy.vector_entry_point, copy.kwargs) == (
            spec.entry_point,
            spec.vector_entry_point,
            spec.kwargs,
        )
    module = agentgym_budget.registration
    assert module.__getattr__(spec.entry_point.split(":")[1]) == EnvEntryPoint(_CATALOG[env_id].entry_point)
    assert module.__getattr__(spec.vector_entry_point.split(":")[1]) == VectorEntryPoint(env_id)


def test_a_spec_from_json_makes_the_same_budgeted_stack():
    from gymnasium.envs.registration import EnvSpec

    env = gym.make(COIN, level=3, max_turns=4, show_budget=True)
    twin = gym.make(EnvSpec.from_json(env.spec.to_json()))
    try:
        assert [type(layer).__name__ for layer in _layers(twin)] == [type(layer).__name__ for layer in _layers(env)]
        assert twin.reset(seed=1) == env.reset(seed=1)
    finally:
        env.close()
        twin.close()
    with pytest.raises(AttributeError, match=r"no attribute 'os\.system'"):
        agentgym_budget.registration.__getattr__("os.system")  # only registered targets resolve


@pytest.mark.parametrize("env_id", IDS)
def test_every_id_resolves_without_namespace(env_id):
    short = env_id.split("/", 1)[1]
    assert agentgym_budget.registration.resolve_id(short) == env_id
    assert agentgym_budget.registration.resolve_id(f"agentgym_budget:{env_id}") == env_id


def test_unknown_id_suggests_the_closest():
    with pytest.raises(UnknownEnvIdError) as err:
        agentgym_budget.make("TextWorld-Cookng-v0")
    assert "Did you mean 'agentgym_budget/TextWorld-Cooking-v0'" in str(err.value)
    assert isinstance(err.value, gym.error.Error)
    assert str(len(IDS)) in str(err.value) and "agentgym-budget list --envs" in str(err.value)
    assert "TextWorld-CoinCollector-v0" not in str(err.value), "the whole list belongs to `list`, not the error"


def test_no_id_is_registered_outside_the_package_namespace():
    """Short ids work through agentgym_budget.make; gym.make's root namespace is left alone (docs/envs/index.md)."""
    specs = list(gym.registry.values())
    assert any(spec.namespace == "agentgym_budget" for spec in specs)
    elsewhere = [
        s.id for s in specs if s.namespace != "agentgym_budget" and str(s.entry_point).startswith("agentgym_budget")
    ]
    assert not elsewhere, (
        f"registered outside the package's namespace: {elsewhere}"
    )  # (minigrid's own BabyAI ids are its)
    with pytest.raises(gym.error.NameNotFound):
        gym.make("TextWorld-Cooking-v0")


@pytest.mark.slow
def test_import_registers_without_loading_engines():
    code = "import sys, agentgym_budget; assert 'textworld' not in sys.modules, 'textworld imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.slow
def test_gym_make_from_code_that_never_imported_the_package():
    code = (
        "import gymnasium as gym\n"
        "env = gym.make('agentgym_budget:agentgym_budget/TextWorld-CoinCollector-v0')\n"
        "obs, info = env.reset(seed=0, options={'task': 0})\n"
        "print(info['task_id'])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "coin-l5-0"


COIN = "agentgym_budget/TextWorld-CoinCollector-v0"


def test_a_misspelled_argument_of_gym_make_is_a_typed_error_with_a_did_you_mean():
    from agentgym_budget.errors import InvalidOptionError

    with pytest.raises(InvalidOptionError, match=r"CoinCollectorEnv has no argument 'levle'\. Did you mean 'level'\?"):
        gym.make(COIN, levle=3)


def test_textworld_info_key_names_point_to_ours():
    from agentgym_budget.errors import InvalidInfoKeyError

    with pytest.raises(InvalidInfoKeyError, match=r"TextWorld's name for 'admissible_actions', which every info has"):
        gym.make(COIN, level=3, info_keys={"admissible_commands"})
    with pytest.raises(InvalidInfoKeyError, match=r"Did you mean 'admissible_actions'\?"):
        gym.make(COIN, level=3, info_keys={"admissible_action"})


def test_gym_make_applies_the_turn_budget_and_its_spec_rebuilds_the_stack():
    from agentgym_budget.wrappers import TurnBudget

    env = gym.make(COIN, level=3, max_turns=2, show_budget=True)
    try:
        budget = next(layer for layer in _layers(env) if isinstance(layer, TurnBudget))
        assert budget.max_turns == 2 and budget.show_budget
        assert env.spec.kwargs["max_turns"] == 2 and [w.name for w in env.spec.additional_wrappers] == ["TurnBudget"]
        observation, info = env.reset(seed=3)
        assert observation.endswith("[Turns left: 2 of 2]") and info["max_turns"] == 2
        env.step("look")
        assert env.step("look")[3] is True  # truncated at the second turn
        twin = gym.make(env.spec)
        try:
            assert [type(layer).__name__ for layer in _layers(twin)] == [type(layer).__name__ for layer in _layers(env)]
            assert twin.reset(seed=3) == (observation, info)
        finally:
            twin.close()
    finally:
        env.close()
    with pytest.raises(agentgym_budget.errors.InvalidOptionError, match="show_budget=True needs max_turns"):
        gym.make(COIN, level=3, show_budget=True)


def _layers(env):
    layers = [env]
    while hasattr(layers[-1], "env"):
        layers.append(layers[-1].env)
    return layers
