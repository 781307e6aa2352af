"""The TextWorld layers of the engine do what TextWorld's do, with the constant work done once."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("textworld")

from textworld.envs.wrappers import tw_inform7

from agentgym_budget.tasks.textworld.engine import _detect_extra_infos

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
