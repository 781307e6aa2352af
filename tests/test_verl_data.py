"""verl dataset rows without verl: export-dataset's parquet, read back as verl's dataset reads it."""

from __future__ import annotations

import numpy as np
import pytest

from agentgym_budget.cli.main import main
from agentgym_budget.errors import InvalidBudgetError, InvalidOptionError
from agentgym_budget.integrations.session import EpisodeSession, SessionConfig
from agentgym_budget.integrations.verl_data import row_episode, verl_rows

pq = pytest.importorskip("pyarrow.parquet", reason="writing parquet needs pyarrow (the verl extra)")


def test_exported_rows_name_the_episode_they_play(tmp_path) -> None:
    path = tmp_path / "shop.parquet"
    argv = ["export-dataset", "WebShop-1k-v0", "--episodes", "4", "--seed", "3", "--budgets", "4,9", "-o", str(path)]
    assert main([*argv, "--tasks", "0,2", "--show-budget"]) == 0
    table = pq.read_table(path)
    frame_rows = table.to_pandas().to_dict("records")  # how verl's dataset hands rows over: numpy inside
    assert isinstance(frame_rows[0]["extra_info"]["budgets"], np.ndarray)
    budgets = []
    for i, row in enumerate(frame_rows):
        config, episode = row_episode(row["extra_info"])
        assert config == SessionConfig("WebShop-1k-v0", budgets=(4, 9))
        assert episode == {"task": [0, 2][i % 2], "seed": 3 + i, "show_budget": True}
        session = EpisodeSession(config)
        first = session.reset(**episode)
        assert first.budget_shown and first.task_id == session.env.unwrapped.task_ids[episode["task"]]
        budgets.append(first.max_turns)
        session.close()
    assert set(budgets) <= {4, 9}
    assert [row["agent_name"] for row in frame_rows] == ["agentgym_budget"] * 4


def test_bad_rows_and_arguments_are_explained() -> None:
    with pytest.raises(InvalidOptionError, match="must be a mapping"):
        row_episode(["env_id"])  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match="needs 'env_id'"):
        row_episode({"seed": 1})
    with pytest.raises(InvalidOptionError, match="Did you mean 'budgets'"):
        row_episode({"env_id": "WebShop-1k-v0", "budget": [3]})
    with pytest.raises(InvalidBudgetError):
        row_episode({"env_id": "WebShop-1k-v0", "max_turns": 0})
    with pytest.raises(InvalidOptionError, match="not a mix"):
        verl_rows(SessionConfig("WebShop-1k-v0"), episodes=2, tasks=[0, "x"])
    with pytest.raises(InvalidOptionError, match="positive integer"):
        verl_rows(SessionConfig("WebShop-1k-v0"), episodes=0)
    assert row_episode({"env_id": "WebShop-1k-v0", "index": 5, "my_tag": "x"})[1] == {}  # others ignored
