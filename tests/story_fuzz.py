"""Fuzzing story files: generated TextWorld games with bytes changed and their checksum fixed.

``python -m tests.story_fuzz CASES FOLDER`` writes, for each hypothesis example, a copy of a generated
game with 1 to 8 bytes of its code (high memory) replaced and the header checksum recomputed, checks it
as the env does (:func:`check_story_file`) and plays a few commands in a time-limited interpreter
(:class:`GuardedFrotzEnv`, 2 s per call). A case may play, or raise ``DataError`` or
``InterpreterHaltedError``; any other exception fails, and a crash kills only this child. It prints
``{"cases", "played", "halted", "refused"}``; ``SNAPSHOT_FUZZ_TRACE=1`` prints each case first. Known
cases found earlier are always tried too (hypothesis ``@example``), before the generated ones.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agentgym_budget.errors import DataError, InterpreterHaltedError
from agentgym_budget.tasks.textworld import games
from agentgym_budget.tasks.textworld.story_file import check_story_file
from agentgym_budget.tasks.textworld.watchdog import GuardedFrotzEnv

__all__ = ["main", "run"]

_UNLINK_LOOP = [(93488, 53), (1, 153), (5419, 39), (7390628, 200)]
"""A case found by this fuzz: starting the story loops in frotz's ``unlink_object`` (the watchdog ends it)."""
_DIVISION_BY_ZERO = [(18830982, 215), (36058, 55), (6289827, 155), (7429, 177), (62775871, 170), (99, 132), (385, 137)]
_DIVISION_BY_ZERO.append((1684373619, 207))  # found by this fuzz: @div by zero (SIGFPE before the guard)
_CALL_PAST_THE_END = [(67, 254), (179, 67)]  # found by this fuzz: a call past the story's end (SIGSEGV)
_ILLEGAL_WINDOW = [(0, 16), (3324, 254), (1073741823, 30), (138, 235), (1279237, 55), (738, 251), (37, 45), (4991, 108)]
"""Found by this fuzz: ``@set_window`` with an illegal window (SIGSEGV before the guard)."""


def _mutated(data: bytes, edits: list[tuple[int, int]]) -> bytes:
    story = bytearray(data)
    high, length = int.from_bytes(story[4:6], "big"), int.from_bytes(story[0x1A:0x1C], "big") * 8
    for position, value in edits:
        story[high + position % (length - high)] = value
    story[0x1C:0x1E] = (sum(story[0x40:length]) % 65536).to_bytes(2, "big")
    return bytes(story)


def run(cases: int, folder: Path) -> dict[str, Any]:
    """Fuzz ``cases`` mutated stories written in ``folder`` (see the module docstring)."""
    source = Path(games.generate_game(games.coin_collector_recipe(level=3), seed=0, split="train")).resolve()
    folder = folder.resolve()
    os.chdir(folder)  # a mutated story may save or script into the working directory: keep that in the folder
    data = source.read_bytes()
    counts = {"played": 0, "halted": 0, "refused": 0}
    trace = bool(os.environ.get("SNAPSHOT_FUZZ_TRACE"))
    edit = st.tuples(st.integers(0, 2**31), st.integers(0, 255))

    @settings(
        max_examples=cases, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(st.lists(edit, min_size=1, max_size=8))
    @example(_UNLINK_LOOP)
    @example(_DIVISION_BY_ZERO)
    @example(_ILLEGAL_WINDOW)
    @example(_CALL_PAST_THE_END)
    def case(edits: list[tuple[int, int]]) -> None:
        if trace:
            print(f"case {edits}", file=sys.stderr, flush=True)
        path = folder / "mutant.z8"
        path.write_bytes(_mutated(data, edits))
        try:
            check_story_file(path)
            frotz = GuardedFrotzEnv(str(path), seed=1, time_limit=2.0)
            try:
                for command in ("look", "go north", "take coin", "inventory"):
                    frotz.step(command)
            finally:
                frotz.close()
            counts["played"] += 1
        except InterpreterHaltedError:
            counts["halted"] += 1
        except DataError:
            counts["refused"] += 1

    case()
    return {"cases": sum(counts.values()), **counts}


def main() -> None:
    """``python -m tests.story_fuzz CASES FOLDER``."""
    warnings.simplefilter("ignore")
    print(json.dumps(run(int(sys.argv[1]), Path(sys.argv[2]))))


if __name__ == "__main__":
    main()
