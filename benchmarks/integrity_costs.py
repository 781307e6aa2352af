"""What file integrity costs: cache verification, story file checks, grammar checks, and eval-free ALFWorld steps.

Side by side in one run:

* cache entries (a TextWorld Cooking game, an ALFWorld game, the WebShop catalog and search
  index of ``WebShop-v0``): verifying an entry against its SHA-256 manifest the first time a
  process uses it (``cold``: every file hashed) and afterwards (``warm``: ``stat`` only), next
  to what making the env and resetting it costs (in a warm process, median);
* the ``.z8`` story file check (header + checksum), cold and warm;
* the ALFWorld grammar check (every ``{expression}``, template, condition and query of a game)
  next to reading the whole game file (JSON, TextWorld's grammar parser), and what it adds to
  a process beyond the parsing that playing the games does anyway (parses are cached per
  process and shared by every game with the same grammar);
* ALFWorld steps with grammar expressions evaluated by Python's ``eval`` (the previous code,
  reproduced here on trusted generated games) vs the compiled expression language, on the same
  games (a copy each, so they share no cached text) and commands, alternating step by step.

Results go to ``benchmarks/results/integrity_costs.json``.

Usage::

    python benchmarks/integrity_costs.py [--repeats 20] [--steps 40] [--smoke]
"""

from __future__ import annotations

import argparse
import functools
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _harness
import gymnasium as gym
from textworld.envs.pddl import textgen

import agentgym_budget  # noqa: F401  (registers the ids)
from agentgym_budget.storage import cache
from agentgym_budget.tasks.alfworld import data as alfworld_data
from agentgym_budget.tasks.alfworld import grammar, pddl_env
from agentgym_budget.tasks.alfworld.engine import AlfworldEngine
from agentgym_budget.tasks.alfworld.env import ALFWorldEnv
from agentgym_budget.tasks.alfworld.expressions import compile_expression
from agentgym_budget.tasks.textworld import story_file


def median_ms(function: Callable[[], Any], repeats: int, before: Callable[[], Any] = lambda: None) -> float:
    times = []
    for _ in range(repeats):
        before()
        start = time.perf_counter()
        function()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def entry_size_mib(entry: Path) -> float:
    return sum(p.stat().st_size for p in entry.rglob("*") if p.is_file()) / 2**20


def make_and_reset(env_id: str, kwargs: dict[str, Any], options: dict[str, Any] | None) -> Callable[[], None]:
    def run() -> None:
        env = gym.make(env_id, **kwargs)
        env.reset(seed=0, options=options)
        env.close()

    return run


def entries_used(run: Callable[[], None]) -> list[Path]:
    """The cache entries ``run`` checks (and builds if they are missing)."""
    used: set[Path] = set()
    real = cache.check_entry

    def spy(entry: Any) -> str | None:
        used.add(Path(entry))
        return real(entry)

    cache.check_entry = spy
    try:
        run()
    finally:
        cache.check_entry = real
    return sorted(entry for entry in used if entry.is_dir())


def verify(entries: list[Path]) -> None:
    for entry in entries:
        assert cache.check_entry(entry) is None, entry


def cache_entries(repeats: int) -> list[dict[str, Any]]:
    families = [
        ("TextWorld Cooking game", "agentgym_budget/TextWorld-Cooking-v0", {}, {"task": "cooking-d3-0"}),
        ("ALFWorld game", "agentgym_budget/ALFWorld-v0", {"num_games": 1}, None),
        ("WebShop-v0 catalog + index", "agentgym_budget/WebShop-v0", {}, None),
    ]
    rows = []
    for label, env_id, kwargs, options in families:
        run = make_and_reset(env_id, kwargs, options)
        cache._VERIFIED.clear()
        entries = entries_used(run)  # builds what is missing, warms the process
        check = functools.partial(verify, entries)
        cold = median_ms(check, repeats, before=cache._VERIFIED.clear)
        warm = median_ms(check, repeats)
        rows.append(
            {
                "family": label,
                "entries": len(entries),
                "size_mib": round(sum(entry_size_mib(e) for e in entries), 2),
                "verify_cold_ms": cold,
                "verify_warm_ms": warm,
                "make_and_reset_ms": median_ms(run, max(3, repeats // 4)),
            }
        )
        print(
            f"{label:28s} {rows[-1]['size_mib']:7.2f} MiB  verify cold {cold:7.2f} ms  warm {warm:6.3f} ms  "
            f"make+reset {rows[-1]['make_and_reset_ms']:8.2f} ms",
            flush=True,
        )
    return rows


def story_check(repeats: int) -> dict[str, Any]:
    env = gym.make("agentgym_budget/TextWorld-Cooking-v0")
    path = env.unwrapped._game_path("cooking-d3-0")
    env.close()
    cold = median_ms(lambda: story_file.check_story_file(path), repeats, before=story_file._CHECKED.clear)
    warm = median_ms(lambda: story_file.check_story_file(path), repeats)
    size = Path(path).stat().st_size / 2**10
    print(f"story file check ({size:.0f} KiB)   cold {cold:.3f} ms  warm {warm:.4f} ms", flush=True)
    return {"size_kib": size, "cold_ms": cold, "warm_ms": warm}


def clear_grammar_caches() -> None:
    compile_expression.cache_clear()
    grammar._parse_symbols.cache_clear()
    grammar._parse_query.cache_clear()
    pddl_env.GAME_CACHE.clear()


def play(paths: list[str], steps: int) -> None:
    for index, path in enumerate(paths):
        engine = AlfworldEngine()
        engine.load(path)
        state, rng = engine.reset(index), random.Random(index)
        for _ in range(steps):
            state = engine.step(rng.choice(state["admissible_commands"]))
        engine.close()


def grammar_check(paths: list[str], repeats: int, steps: int) -> dict[str, Any]:
    logic = alfworld_data.read_game(paths[0])[1]
    check = functools.partial(grammar.check_grammar, logic, paths[0])
    cold = median_ms(check, repeats, before=clear_grammar_caches)
    warm = median_ms(check, repeats)
    read = median_ms(lambda: alfworld_data.read_game(paths[0]), max(3, repeats // 4), before=clear_grammar_caches)
    clear_grammar_caches()
    real, grammar.check_grammar = grammar.check_grammar, lambda logic, source: None
    try:
        play(paths, steps)  # parses what playing needs, as the code before the check did
    finally:
        grammar.check_grammar = real
    start = time.perf_counter()
    check()
    added = (time.perf_counter() - start) * 1e3
    print(
        f"ALFWorld grammar check         cold {cold:.1f} ms (of which playing {len(paths)} games parses all but "
        f"{added:.1f} ms anyway)  warm {warm:.2f} ms  read_game {read:.1f} ms",
        flush=True,
    )
    return {"check_cold_ms": cold, "check_added_to_playing_ms": added, "check_warm_ms": warm, "read_game_ms": read}


class EvalGrammar(grammar.CompiledGrammar):
    """The previous evaluator: Python's ``eval`` over TextWorld's module globals (benchmark only)."""

    @staticmethod
    def _evaluate(symbol: Any, ctx: Any) -> Any:
        scope = dict(ctx["variables"])
        scope.update(self=symbol, context=ctx)
        return eval(symbol.expression, vars(textgen), scope)  # trusted generated games


def alfworld_steps(paths: list[str], steps: int) -> dict[str, Any]:
    times: dict[str, list[float]] = {"eval": [], "compiled": []}
    cpu_times: dict[str, list[float]] = {"eval": [], "compiled": []}
    scratch = Path(tempfile.mkdtemp())
    for index, path in enumerate(paths):
        engines = {"eval": AlfworldEngine(), "compiled": AlfworldEngine()}
        states = {}
        for name, engine in engines.items():
            own = scratch / name / str(index) / "game.tw-pddl"  # a copy each: no shared derivation caches
            own.parent.mkdir(parents=True)
            shutil.copy(path, own)
            shutil.copy(Path(path).with_name("traj_data.json"), own.with_name("traj_data.json"))
            engine.load(str(own))
            if name == "eval":
                engine.pddl_env._grammar.__class__ = EvalGrammar
            states[name] = engine.reset(index)
        rng = random.Random(index)
        for _ in range(steps):
            command = rng.choice(states["compiled"]["admissible_commands"])
            for name in ("eval", "compiled") if rng.random() < 0.5 else ("compiled", "eval"):
                start, cpu = time.perf_counter(), time.thread_time()
                states[name] = engines[name].step(command)
                times[name].append((time.perf_counter() - start) * 1e3)
                cpu_times[name].append((time.thread_time() - cpu) * 1e3)
            assert states["eval"].feedback == states["compiled"].feedback
            assert states["eval"]["admissible_commands"] == states["compiled"]["admissible_commands"]
            if states["compiled"]["won"]:
                break
        for engine in engines.values():
            engine.close()
    shutil.rmtree(scratch)
    result = {
        "steps": len(times["compiled"]),
        "median_step_ms_eval": statistics.median(times["eval"]),
        "median_step_ms_compiled": statistics.median(times["compiled"]),
        "median_step_cpu_ms_eval": statistics.median(cpu_times["eval"]),
        "median_step_cpu_ms_compiled": statistics.median(cpu_times["compiled"]),
    }
    result["ratio_eval_over_compiled"] = result["median_step_ms_eval"] / result["median_step_ms_compiled"]
    print(
        f"ALFWorld step ({result['steps']} steps, identical text)  eval {result['median_step_ms_eval']:.3f} ms  "
        f"compiled {result['median_step_ms_compiled']:.3f} ms  (x{result['ratio_eval_over_compiled']:.2f})",
        flush=True,
    )
    return result


def readme_rows(result: dict[str, Any]) -> list[list[str]]:
    """The README rows of this benchmark, formatted from its ``result``."""
    cached = result["cache_entries"]
    text, alf, shop = (cached[i] for i in range(3))
    story, check, steps = result["story_file"], result["alfworld_grammar_check"], result["alfworld_steps"]
    command = "`python benchmarks/integrity_costs.py`"
    return [
        [
            "Cache entry check against its SHA-256 manifest, first use in a process / later uses: TextWorld game "
            f"({text['size_mib']:.2f} MiB), ALFWorld game, WebShop-v0 catalog + index ({shop['size_mib']:.0f} MiB)",
            ", ".join(f"{row['verify_cold_ms']:.2g} / {row['verify_warm_ms']:.2g} ms" for row in cached)
            + f" (`gym.make` + `reset`: {text['make_and_reset_ms']:.0f}, {alf['make_and_reset_ms']:.0f}, "
            f"{shop['make_and_reset_ms']:.2g} ms)",
            "",
            command,
        ],
        [
            f"`.z8` story file check (header, checksum; {story['size_kib']:.0f} KiB), first / later",
            f"{story['cold_ms']:.2g} / {story['warm_ms']:.2g} ms",
            "",
            "same",
        ],
        [
            f"ALFWorld step, grammar expressions compiled vs Python's `eval` ({steps['steps']} steps, identical text)",
            f"{steps['median_step_ms_compiled']:.2f} vs {steps['median_step_ms_eval']:.2f} ms median "
            f"(**{steps['ratio_eval_over_compiled']:.2f}x** faster; CPU time {steps['median_step_cpu_ms_compiled']:.2f} "
            f"vs {steps['median_step_cpu_ms_eval']:.2f} ms)",
            "no slower",
            "same",
        ],
        [
            "ALFWorld grammar check of a game, first game of a process / later games",
            f"{check['check_cold_ms']:.0f} ms ({check['check_added_to_playing_ms']:.1f} ms "
            f"of parsing that playing does not need) / {check['check_warm_ms']:.2f} ms",
            "",
            "same",
        ],
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--steps", type=int, default=40)
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.repeats, args.steps = 3, 5
    recording = _harness.start("integrity_costs", args.smoke)
    env = ALFWorldEnv(num_games=1)
    paths = [env._game_path(task) for task in env.task_ids]
    env.close()
    pddl_env.GAME_CACHE.clear()
    result = {
        "cache_entries": cache_entries(args.repeats),
        "story_file": story_check(args.repeats),
        "alfworld_grammar_check": grammar_check(paths, args.repeats, args.steps),
        "alfworld_steps": alfworld_steps(paths, args.steps),
    }
    recording.finish(result, readme_rows(result))


if __name__ == "__main__":
    main()
