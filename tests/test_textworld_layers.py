"""The TextWorld layers of the engine and the feedback cleaning do what the code they replace did."""

from __future__ import annotations

import random
import re

import pytest

pytest.importorskip("textworld")

from textworld.envs.wrappers import tw_inform7

from agentgym_budget.tasks.textworld.engine import _detect_extra_infos
from agentgym_budget.tasks.textworld.turns import _GAME_OVER_QUESTION, _TURN_COUNT, clean_feedback

PIECES = (
    "<score>\n",
    "</score>",
    "<moves>\n",
    "</moves>",
    "abc",
    "\n",
    "12",
    "[taking]",
    " x ",
    "<score>",
    "</moves>\n",
)


def test_extra_infos_are_detected_as_textworld_detects_them() -> None:
    rng = random.Random(0)
    for _ in range(3000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 12)))
        for tracked in (["moves", "score"], ["score"], [], ["inventory", "score", "moves"]):
            assert _detect_extra_infos(text, tracked) == tw_inform7._detect_extra_infos(text, tracked), (text, tracked)


def test_an_unknown_extra_info_tag_is_refused_as_textworld_refuses_it() -> None:
    with pytest.raises(ValueError, match="doesn't support tag"):
        _detect_extra_infos("text", ["weather"])
    with pytest.raises(ValueError, match="doesn't support tag"):
        tw_inform7._detect_extra_infos("text", ["weather"])


def test_feedback_is_cleaned_as_the_patterns_clean_it() -> None:
    prompt = re.compile(r"\n>[^\n]*\Z")
    pieces = ("\n", ">", " ", "a", "You scored 3 out of 5", ", in 7 turns.", "Would you like to RESTART, RESTORE a")
    rng = random.Random(1)
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 10)))
        for turn in (1, 4):
            expected = _TURN_COUNT.sub(
                rf"\1, in {turn} turn{'' if turn == 1 else 's'}.", _GAME_OVER_QUESTION.sub("", prompt.sub("", text))
            )
            assert clean_feedback(text, turn=turn) == expected, text
