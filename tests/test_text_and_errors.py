"""Text normalisation into the spaces, and the typed error hierarchy."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentgym_budget import errors, text
from agentgym_budget._internal.install_hint import command_for, install_command


@given(st.text(max_size=2000))
def test_normalized_text_is_always_in_the_observation_space(raw):
    normalized = text.normalize_text(raw)
    assert text.observation_space().contains(normalized)
    assert text.normalize_text(normalized) == normalized


def _reference_normalize(raw: str) -> str:
    """``normalize_text`` as its rules read, one regular expression per rule (its fast paths must agree)."""
    folded = text._to_charset(raw.replace("\r\n", "\n").replace("\r", "\n"))
    folded = re.sub(r"[ \t]+\n", "\n", folded + "\n")
    return re.sub(r"\n{3,}", "\n\n", folded).strip()


_AWKWARD = st.sampled_from(list(" \t\n\r\x00\x0b\x1f\x7fab~\xe9\u2014\u2028"))


@given(st.one_of(st.text(alphabet=_AWKWARD, max_size=300), st.text(max_size=300)))
def test_normalized_text_follows_its_rules(raw):
    assert text.normalize_text(raw) == _reference_normalize(raw)


@given(st.text(min_size=50, max_size=400), st.integers(min_value=10, max_value=49))
def test_long_text_is_cut_with_a_mark(raw, limit):
    normalized = text.normalize_text("x" * 60 + raw, max_length=limit)
    assert len(normalized) <= limit and normalized.endswith(text.TRUNCATION_MARK)


def test_spaces_accept_game_text():
    assert text.action_space().contains("go east")
    assert text.observation_space().contains("You see a closed fridge.\n\n> ")
    assert text.observation_space().contains("")


@pytest.mark.parametrize(
    ("error", "bases"),
    [
        (errors.UnknownEnvIdError, (gym.error.NameNotFound,)),
        (errors.InvalidBudgetError, (ValueError,)),
        (errors.InvalidActionError, (TypeError, gym.error.InvalidAction)),
        (errors.EpisodeOverError, (gym.error.ResetNeeded,)),
        (errors.SnapshotMismatchError, (ValueError,)),
        (errors.MissingDependencyError, (gym.error.DependencyNotInstalled,)),
        (errors.UnknownTaskError, (LookupError,)),
    ],
)
def test_error_hierarchy(error, bases):
    assert issubclass(error, errors.AgentGymBudgetError)
    assert issubclass(error, gym.error.Error)
    for base in bases:
        assert issubclass(error, base)


def test_did_you_mean():
    assert errors.did_you_mean("cookng", ["cooking", "treasure"]) == " Did you mean 'cooking'?"
    assert errors.did_you_mean("zzzz", ["cooking"]) == ""


def test_missing_dependency_names_the_extra():
    message = str(errors.MissingDependencyError.for_extra("alfworld", "alfworld", "ALFWorld-v0"))
    assert install_command("alfworld") in message


def test_install_hint_fits_an_editable_checkout():
    # The suite runs from an editable install of this checkout (the README's test command).
    checkout = Path(__file__).resolve().parents[1]
    assert install_command("trl") == f'pip install -e "{checkout}[trl]"'
    assert command_for({"url": "https://example.org/a.whl", "archive_info": {}}, "trl") == (
        'pip install "agentgym-budget[trl]"'
    )
    assert command_for({"url": "file:///src/agb", "dir_info": {}}, "ray") == 'pip install "/src/agb[ray]"'


@pytest.mark.slow
def test_python_dash_m_runs_the_cli():
    done = subprocess.run(
        [sys.executable, "-m", "agentgym_budget", "list", "--agents"], capture_output=True, text=True, check=True
    )
    assert done.stdout.startswith("Agents (--agent NAME):")
