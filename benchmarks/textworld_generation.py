"""What the expert check adds to generating a TextWorld game (the first use of a game).

For each kind of game (every generated id's default settings, plus Cooking difficulty 7), on
seeds ``0..n-1``, side by side in one run:

* ``make``: TextWorld's generation and Inform 7 compilation of the game (``games._make``);
* ``check``: the expert check every game passes before it is cached (``games.expert_turns``).

It prints the medians and the first-use slowdown ``(make + check) / make``.

Usage::

    python benchmarks/textworld_generation.py [--seeds 4]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import _harness

from agentgym_budget.tasks.textworld import games

RESULTS = Path(__file__).parent / "results"
RECIPES = {
    "Cooking d3": games.cooking_recipe(3),
    "Cooking d7": games.cooking_recipe(7),
    "CoinCollector l5": games.coin_collector_recipe(5),
    "TreasureHunter l5": games.treasure_hunter_recipe(5),
    "Simple": games.simple_recipe(),
    "Custom": games.custom_recipe(),
}


def timed(function, *args) -> tuple[float, object]:
    start = time.perf_counter()
    result = function(*args)
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=4)
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.seeds = 1
    recording = _harness.start("textworld_generation", args.smoke)
    result = {}
    kinds = ["CoinCollector l5", "Simple"] if args.smoke else list(RECIPES)  # the quickest to generate
    for name in kinds:
        recipe = RECIPES[name]
        make, check, failed = [], [], 0
        for seed in range(args.seeds):
            with tempfile.TemporaryDirectory() as folder:
                elapsed, _ = timed(games._make, recipe, seed, "train", Path(folder))
                make.append(elapsed)
                elapsed, turns = timed(games.expert_turns, Path(folder) / "game.z8")
                check.append(elapsed)
                failed += turns is None
        row = {
            "make_s": statistics.median(make),
            "check_s": statistics.median(check),
            "first_use_slowdown": (sum(make) + sum(check)) / sum(make),
            "seeds_failing_the_check": failed,
        }
        result[name] = row
        print(
            f"{name:18s} make {row['make_s']:.2f} s  check {row['check_s']:.3f} s  "
            f"first use x{row['first_use_slowdown']:.2f}  failing the check {failed}/{args.seeds}"
        )
    recording.finish(result)


if __name__ == "__main__":
    main()
