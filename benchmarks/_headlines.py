"""The headline of each benchmark row: a short name and one number with its unit, read from the row's figure.

A row of a script's ``readme_rows`` is ``[what, figure, target, reproduce]``, where ``figure`` holds every
number the run measured. The docs table shows one number per row (:func:`headline`); the full ``what`` and
``figure`` follow below the table with the run's date, load and CPU time. The number is read from
``figure`` by a :class:`Headline` (a pattern matched against ``what``), so a rerun that changes the
figure changes the headline with it. A row no :class:`Headline` matches shows the figure's first bold
number; ``tests/test_benchmarks.py`` fails on a row whose headline is not one number.

Example:
    >>> headline(["TextWorld snapshot + restore vs replaying 30 steps (Cooking)", "0.16 ms vs 76 ms (**488x**)", "", ""])
    ('TextWorld snapshot + restore vs replaying 30 steps', '**488x** faster')
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["HEADLINES", "Headline", "headline", "numbers_in"]

NUMBER = r"[-+]?\d[\d,]*(?:\.\d+)?"


def numbers_in(text: str) -> list[str]:
    """The numbers written in ``text``, as written (``1,309``, ``0.970``).

    Example:
        >>> numbers_in("**0.970x** CPU time")
        ['0.970']
    """
    return re.findall(NUMBER, text)


def _first(found: Sequence[str]) -> str:
    return found[0]


def _last(found: Sequence[str]) -> str:
    return found[-1]


def _largest(found: Sequence[str]) -> str:
    return max(found, key=lambda text: float(text.replace(",", "")))


def _smallest(found: Sequence[str]) -> str:
    return min(found, key=lambda text: float(text.replace(",", "")))


def _growth(found: Sequence[str]) -> str:
    before, after = (float(text) for text in found[:2])
    return f"{after - before:+.1f}"


def _share(found: Sequence[str]) -> str:
    part, whole = (float(text.replace(",", "")) for text in found[:2])
    return f"{100 * part / whole:.1f}"


def _speedup(found: Sequence[str]) -> str:
    ours, theirs = (float(text) for text in found[:2])
    return f"{theirs / ours:.1f}"


@dataclass(frozen=True)
class Headline:
    """How one kind of row is headlined.

    Attributes:
        what: A regular expression searched in the row's ``what``; its groups fill ``label``.
        label: The short name shown in the table (``{0}``: the first group of ``what``).
        value: A regular expression searched in the figure; its first group (every match's) is a number.
        cell: The table cell, ``{}`` standing for the number picked.
        pick: Which number of the matches (and their groups) to show: the first by default.
    """

    what: str
    label: str
    value: str
    cell: str
    pick: Callable[[Sequence[str]], str] = _first


HEADLINES: tuple[Headline, ...] = (
    Headline(r"^TextWorld step, full stack", "TextWorld step: full stack vs bare env", r"CPU time ratio \*\*(" + NUMBER + r")\*\*", "**{}x** CPU time"),
    Headline(r"^TextWorld step, lean mode", "TextWorld lean step vs raw jericho (worst game)", r"lean / raw \*\*([\d. /]+)\*\*", "**{}x** CPU time", lambda found: _largest(numbers_in(found[0]))),
    Headline(r"^TextWorld snapshot \+ restore vs replaying 30", "TextWorld snapshot + restore vs replaying 30 steps", r"\*\*(" + NUMBER + r")x\*\*", "**{}x** faster"),
    Headline(r"^TextWorld snapshot \+ restore vs replaying 10", "TextWorld snapshot + restore vs `env.copy()`", r"/ (" + NUMBER + r")x", "**{}x** faster"),
    Headline(r"^TextWorld `fork\(8\)`", "TextWorld `fork(64)` vs a new stack per fork", r"\*\*(" + NUMBER + r")x\*\* for 64", "**{}x** faster"),
    Headline(r"^TextWorld serialised snapshot", "TextWorld snapshot, serialised", r"(" + NUMBER + r") KiB", "**{} KiB**"),
    Headline(r"^TextWorld first use of a game", "TextWorld expert check of a new game", r"check adds " + NUMBER + r"-(" + NUMBER + r") %", "at most **{}%** of generation"),
    Headline(r"^ALFWorld step, ours vs the stock", "ALFWorld step vs the stock engine", r"\*\*(" + NUMBER + r")x\*\*", "**{}x** faster (CPU)"),
    Headline(r"^ALFWorld step of the env with its default infos", "ALFWorld step with default infos vs stock", r"\*\*(" + NUMBER + r")x\*\*", "**{}x** faster (CPU)"),
    Headline(r"^ALFWorld snapshot \+ restore", "ALFWorld snapshot + restore vs replaying 30 steps", r"\*\*(" + NUMBER + r")x\*\*", "**{}x** faster"),
    Headline(r"^ALFWorld `fork\(8\)`", "ALFWorld `fork(8)` vs one restore", r"\*\*(" + NUMBER + r")x\*\*", "**{}x** the time"),
    Headline(r"^ALFWorld serialised snapshot", "ALFWorld snapshot, serialised", r"(" + NUMBER + r") KiB", "**{} KiB**"),
    Headline(r"^WebShop snapshot \+ restore", "WebShop snapshot + restore vs replay", r"\*\*(" + NUMBER + r")x\*\*", "**{}x** faster"),
    Headline(r"^ALFWorld 1,000 create/close", "ALFWorld 1,000 create/close cycles", r"RSS (" + NUMBER + r") -> (" + NUMBER + r") MB", "**{} MB** RSS", lambda found: _growth(found[0])),
    Headline(r"^ALFWorld reset over 1,000", "ALFWorld reset: 1,000 tasks vs 10", r"\*\*([\d.x /]+)\*\*", "**{}x** the time", lambda found: _largest(numbers_in(found[0]))),
    Headline(r"^TextWorld reset over up to 1,000", "TextWorld reset: 1,000 tasks vs 10 (worst family)", r"\*\*(" + NUMBER + r")x\*\*", "**{}x** CPU time", _largest),
    Headline(r"^WebShop step, median", "WebShop step, 100k products (median)", r"^(" + NUMBER + r") ms", "**{} ms**"),
    Headline(r"^WebShop search, median", "WebShop search, 100k products (median)", r"^(" + NUMBER + r") ms", "**{} ms**"),
    Headline(r"^WebShop 100k catalog", "WebShop 100k catalog, load from cache", r"/ (" + NUMBER + r") s \(", "**{} s**"),
    Headline(r"^TWX Coin Collector, `gym.make_vec`", "TWX `make_vec` of 256 envs vs raw engine", r"\*\*(" + NUMBER + r")x\*\*", "**{}x** steps per CPU s", _last),
    Headline(r"^TWX step, `gym.make`", "TWX step vs TextWorldExpress's env", r"\*\*(" + NUMBER + r")x\*\*", "**{}x** CPU time"),
    Headline(r"^TWX snapshot 30 actions deep", "TWX restore vs reset + replay (30 actions)", r"^(" + NUMBER + r") vs (" + NUMBER + r") ms", "**{}x** faster", lambda found: _speedup(found[0])),
    Headline(r"^Native vector env: RSS", "1,024 TextWorld envs in one process", r"\*\*(" + NUMBER + r") GiB\*\*", "**{} GiB** RSS"),
    Headline(r"^Native vector env: steps per CPU", "Vector env vs 64 separate envs", r"\*\*(" + NUMBER + r")x\*\*", "**{}x** steps per CPU s"),
    Headline(r"^Native vector env: wall speedup", "Vector env, 2 threads vs 1 (TextWorld)", r"TextWorld x(" + NUMBER + r")", "**{}x** wall"),
    Headline(r"^Cache entry check", "Cache check of a TextWorld game (later uses)", r"^" + NUMBER + r" / (" + NUMBER + r") ms", "**{} ms**"),
    Headline(r"^`\.z8` story file check", "`.z8` story file check (first use)", r"^(" + NUMBER + r") /", "**{} ms**"),
    Headline(r"^ALFWorld step, grammar expressions", "ALFWorld grammar compiled vs `eval`", r"\*\*(" + NUMBER + r")x\*\*", "**{}x** faster"),
    Headline(r"^ALFWorld grammar check of a game", "ALFWorld grammar check (first game)", r"^(" + NUMBER + r") ms", "**{} ms**"),
    Headline(r"^Pass@\(K,T\) on Ray actors", "Pass@(K,T) on Ray vs local processes", r"\*\*(" + NUMBER + r")\*\*", "**{}x** throughput"),
    Headline(r"^Pass@\(K,T\) `--mode prefix`", "Pass@(K,T) prefix vs independent mode", r"\*\*(" + NUMBER + r")x\*\* fewer env steps", "**{}x** fewer env steps"),
    Headline(r"^LLM agent \(`openai:`", "LLM agent at concurrency 64", r"\*\*(" + NUMBER + r")%\*\*", "**{}%** of the ideal rate"),
    Headline(r"^OpenEnv step over a WebSocket", "OpenEnv step: WebSocket vs in-process", r"\*\*(" + NUMBER + r")\*\*", "**{}x** the time"),
    Headline(r"^Sessions per OpenEnv server", "OpenEnv server, 16 clients", r"(" + NUMBER + r") steps/s;", "**{} steps/s**"),
    Headline(r"^TRL GRPO rollouts", "TRL GRPO rollouts, tiny model", r"\*\*(" + NUMBER + r") turns/s\*\*", "**{} turns/s**"),
    Headline(r"^Training speed, (\S+)", "GRPO rollout generation, {0}", r"\*\*(" + NUMBER + r")\*\* generated tokens/s", "**{} tokens/s**"),
    Headline(r"^GRPO groups with signal, (\w+)", "GRPO groups with a reward signal, {0}", r"^\*\*(" + NUMBER + r")\*\*", "**{}** of groups"),
    Headline(r"^Peak RSS of training, (\S+)", "Peak RSS of training, {0} (largest phase)", r"\*\*(" + NUMBER + r")\*\* GB", "**{} GB**", _largest),
    Headline(r"^`hf:` agent, 8 Coin Collector", "`hf:` agent, batch of 8 vs 1", r"\*\*(" + NUMBER + r")x\*\*", "**{}x** faster"),
    Headline(r"^ScienceWorld step", "ScienceWorld step vs the package's env", r"^\*\*(" + NUMBER + r")x\*\*", "**{}x** CPU time"),
    Headline(r"^ScienceWorld reset", "ScienceWorld reset (new variation) vs the package's", r"^(" + NUMBER + r") / " + NUMBER + r" vs (" + NUMBER + r") /", "**{}x** faster (CPU)", lambda found: _speedup(found[0])),
    Headline(r"^ScienceWorld restore by replay", "ScienceWorld restore, 30 deep, vs reload + replay", r"\*\*(" + NUMBER + r")x\*\*", "**{}x** CPU time", _last),
    Headline(r"^ScienceWorld memory", "ScienceWorld memory, 64 envs (one JVM)", r"\*\*[\d,]+ / [\d,]+ / ([\d,]+)\*\*", "**{} MiB**"),
    Headline(r"^ScienceWorld gold paths", "ScienceWorld gold paths (2 variations per task)", r"\*\*(" + NUMBER + r")/(" + NUMBER + r")\*\*", "**{}%** won", lambda found: _share(found[0])),
    Headline(r"^ScienceWorld process signal", "ScienceWorld distinct scores along a gold path", r"median \*\*(" + NUMBER + r")\*\*", "**{}** (median)"),
    Headline(r"^ScienceWorld expert after random", "ScienceWorld expert after 1 random command", r"\*\*(" + NUMBER + r")\*\*", "**{}** won"),
    Headline(r"^ScienceWorld `admissible_actions`", "ScienceWorld valid actions per state (64 kept)", r"\*\*(" + NUMBER + r")\*\*", "**{}** (median)"),
    Headline(r"^BabyAI step with GLAM text", "BabyAI step vs minigrid's own", r"CPU time ratio \*\*(" + NUMBER + r")\*\*", "**{}x** CPU time"),
    Headline(r"^BabyAI step with the default", "BabyAI step, plan progress (worst case)", r"^(" + NUMBER + r")x raw", "**{}x** the raw step"),
    Headline(r"^BabyAI reset", "BabyAI reset, sparse progress", r"^(" + NUMBER + r") /", "**{} ms** CPU"),
    Headline(r"^BabyAI snapshot \+ restore", "BabyAI snapshot + restore (8x8, in memory)", r"\*\*(" + NUMBER + r")\*\*", "**{} ms**"),
    Headline(r"^BabyAI `expert_action`", "BabyAI `expert_action` mid-episode", r"^(" + NUMBER + r") ms", "**{} ms** CPU"),
    Headline(r"^BabyAI `gym.make_vec`", "BabyAI `make_vec` of 256 envs vs raw levels", r"\*\*(" + NUMBER + r")x\*\*", "**{}x** steps per CPU s", _last),
    Headline(r"^BabyAI expert \(", "BabyAI expert from reset (13 ids)", r"won \*\*(" + NUMBER + r") of (" + NUMBER + r")\*\*", "**{}%** won", lambda found: _share(found[0])),
    Headline(r"^BabyAI expert from a random", "BabyAI expert from mid-episode states", r"won \*\*(" + NUMBER + r") of (" + NUMBER + r")\*\*", "**{}%** won", lambda found: _share(found[0])),
    Headline(r"^SmolLM2-135M per turn: score:", "SmolLM2 per turn: scoring vs generate + parse", r"\((" + NUMBER + r")x\)", "**{}x** cheaper (CPU)"),
    Headline(r"^SmolLM2-135M greedy evaluation episode", "SmolLM2 scoring: greedy evaluation episode (T=9)", r"^(" + NUMBER + r") vs", "**{} s** CPU"),
    Headline(r"^SmolLM2-135M training episode", "SmolLM2 scoring: training episode (rollout + update)", r"^(" + NUMBER + r") vs", "**{} s** CPU"),
    Headline(r"^Scoring policy sanity gate", "Scoring policy: RL over its SFT base (held-out, T=4)", r"^\*\*(" + NUMBER + r")\*\*", "**{}** success"),
)  # fmt: skip
"""One per kind of row, in the order of the table; the first whose ``what`` matches a row headlines it."""


def _fallback(what: str, figure: str) -> tuple[str, str]:
    """A row no :class:`Headline` matches: ``what`` up to its first parenthesis, and the first bold span."""
    label = re.split(r" \(|: ", what, maxsplit=1)[0]
    bold = re.search(r"\*\*([^*]+)\*\*", figure)
    return label, (f"**{bold[1]}**" if bold else "")


def headline(row: Sequence[str]) -> tuple[str, str]:
    """The short name and the one-number cell of a row ``[what, figure, target, reproduce]``."""
    what, figure = row[0], row[1]
    for spec in HEADLINES:
        named = re.search(spec.what, what)
        if named is None:
            continue
        found = re.findall(spec.value, figure)
        if not found:
            return _fallback(what, figure)
        return spec.label.format(*named.groups()), spec.cell.format(spec.pick(found))
    return _fallback(what, figure)
