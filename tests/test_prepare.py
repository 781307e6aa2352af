"""``agentgym-budget prepare``: a split's games generated into the cache ahead of use, in parallel, resumable."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from agentgym_budget.cli.main import main
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.prepare import prepare_tasks, select_tasks
from agentgym_budget.runner.rollout import EnvRef
from agentgym_budget.storage.cache import CACHE_ENV_VAR

COIN = EnvRef.parse("TextWorld-CoinCollector-v0", "level=1")
TASKS = 3


def _entries(root: Path) -> dict[str, tuple[str, ...]]:
    """Every TextWorld game entry of a cache, with the checksums of its files and its game's content.

    TextWorld writes ``grammar.names_to_exclude`` (a set) into ``game.json`` in the order of the
    process's hash seed, so that file is compared as content with the list sorted.
    """
    entries = {}
    for entry in (root / "textworld").iterdir():
        if entry.is_dir():
            game = json.loads((entry / "game.json").read_text())
            game["grammar"]["names_to_exclude"] = sorted(map(str, game["grammar"]["names_to_exclude"]))
            sums = [line for line in (entry / "manifest.sha256").read_text().splitlines() if "game.json" not in line]
            entries[entry.name] = (*sums, json.dumps(game, sort_keys=True))
    return entries


@pytest.mark.slow
def test_prepare_builds_once_skips_afterwards_and_workers_do_not_change_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tasks = select_tasks(COIN, TASKS)
    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path / "one"))
    first = prepare_tasks(COIN, tasks, workers=1, progress=False)
    assert (first.prepared, first.skipped, first.built) == (TASKS, 0, TASKS)
    again = prepare_tasks(COIN, tasks, workers=1, progress=False)
    assert (again.prepared, again.skipped, again.built) == (0, TASKS, 0)
    env = COIN.make_base()
    assert all(env.unwrapped.task_prepared(task) for task in tasks)
    assert not env.unwrapped.task_prepared(COIN.task_ids()[TASKS])
    env.close()

    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path / "two"))
    parallel = prepare_tasks(COIN, tasks, workers=2, progress=False)
    assert (parallel.prepared, parallel.built) == (TASKS, TASKS)
    assert len(_entries(tmp_path / "one")) == TASKS
    assert _entries(tmp_path / "two") == _entries(tmp_path / "one")


@pytest.mark.slow
def test_two_preparations_at_once_build_each_game_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path))
    tasks = select_tasks(COIN, 2)
    results = []
    threads = [
        threading.Thread(target=lambda: results.append(prepare_tasks(COIN, tasks, progress=False))) for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 2 and sum(result.built for result in results) == len(_entries(tmp_path)) == 2


def test_unknown_task_ids_and_counts_are_refused_with_a_did_you_mean() -> None:
    with pytest.raises(InvalidOptionError, match=r"has no task 'coin-l1-O' in its 'train' split\. Did you mean"):
        select_tasks(COIN, ["coin-l1-O"])
    with pytest.raises(InvalidOptionError, match="must be >= 1"):
        select_tasks(COIN, 0)


def test_the_command_refuses_a_bad_id_or_split_with_a_did_you_mean(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prepare", "TextWorld-CoinColector-v0", "--tasks", "1"]) == 2
    assert "Did you mean 'agentgym_budget/TextWorld-CoinCollector-v0'" in capsys.readouterr().err
    assert main(["prepare", "TextWorld-CoinCollector-v0", "--split", "tran", "--tasks", "1"]) == 2
    assert "Unknown split 'tran'" in (err := capsys.readouterr().err) and "Did you mean 'train'?" in err


@pytest.mark.slow
def test_the_command_prepares_and_reports(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["prepare", "TextWorld-CoinCollector-v0", "--env-args", "level=1", "--tasks", "1", "--workers", "1"]
    assert main(args) == 0
    assert main([*args, "--no-progress"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("0 tasks generated or loaded (0 new cache entries), 1 skipped"), last
