"""Generate, in the background of a full test run, the TextWorld games the suite will ask for.

On a cold cache the suite spends minutes generating games (Inform 7 compiles, one core each), one
at a time as tests first ask for them, while the machine's second core idles. The root
``conftest.py`` starts this module (``python -m tests.warm_games``, at low priority) when a full run
begins and stops it when the run ends: it walks :data:`GAMES_FILE` (the games of a cold run, in
the order the suite first used them) and generates each one that is missing. A test that reaches
a game being generated here waits for it under the cache's lock instead of building it twice; a
game no longer used only costs idle time; a warm cache costs a quick look per game. The
warm-up changes no result: a game is the same whoever generates it.

Refresh the list after tests change the games they use, from the cache of a cold full run::

    AGENTGYM_BUDGET_CACHE=/tmp/cold python -m pytest
    python -m tests.warm_games --record /tmp/cold
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

GAMES_FILE = Path(__file__).with_name("games_used.json")
"""The games of a cold full run, in order of first use (``--record`` writes it)."""


def recorded_games(cache: Path) -> list[dict[str, Any]]:
    """The games in ``cache`` (an ``AGENTGYM_BUDGET_CACHE`` directory), oldest entry first."""
    keys = sorted((cache / "textworld").glob("*/key.json"), key=lambda path: path.parent.stat().st_mtime)
    games = []
    for path in keys:
        key = json.loads(path.read_text())
        games.append({name: key[name] for name in ("challenge", "settings", "split", "seed")})
    return games


def warm(games: list[dict[str, Any]]) -> int:
    """Generate each game of ``games`` that is not cached yet; the number generated (failures are printed, not raised)."""
    from agentgym_budget.tasks.textworld.games import GameRecipe, cached_game, generate_game

    made = 0
    for game in games:
        recipe = GameRecipe(game["challenge"], tuple(sorted(game["settings"].items())), game["split"] is not None)
        split = game["split"] or "train"
        if cached_game(recipe, game["seed"], split) is not None:
            continue
        try:
            generate_game(recipe, game["seed"], split)
            made += 1
        except Exception as err:  # a warm-up never fails the run: the test that needs the game reports it
            print(f"warm_games: {game}: {type(err).__name__}: {err}", file=sys.stderr)
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--record", type=Path, metavar="CACHE", help="write the games of this cache to the list")
    args = parser.parse_args(argv)
    if args.record:
        games = recorded_games(args.record)
        lines = ",\n".join(json.dumps(game, sort_keys=True) for game in games)
        GAMES_FILE.write_text(f"[\n{lines}\n]\n")
        print(f"{len(games)} games written to {GAMES_FILE}")
        return 0
    warm(json.loads(GAMES_FILE.read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
