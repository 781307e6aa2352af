"""Shared fixtures, each built once per session: a TextWorld game file for the File env, a tiny ``hf:`` checkpoint."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentgym_budget.tasks.textworld import games


@pytest.fixture(scope="session")
def coin_game_path() -> str:
    """A small generated TextWorld game (.z8 with its .json beside it)."""
    return str(games.generate_game(games.coin_collector_recipe(level=3), seed=0, split="train"))


@pytest.fixture(scope="session")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``hf:`` agent tests' model directory: a random tiny Qwen2 (``tests/hf_support.py``; needs ``trl``)."""
    from tests.hf_support import save_tiny_checkpoint

    return save_tiny_checkpoint(tmp_path_factory.mktemp("models") / "final")


@pytest.fixture(scope="module")
def local(checkpoint: Path):
    """That checkpoint loaded for the rollout tests (one torch thread), once per module."""
    torch = pytest.importorskip("torch")
    from agentgym_budget.agents.hf_model import load_local_model

    torch.set_num_threads(1)
    return load_local_model(checkpoint)
