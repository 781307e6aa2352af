"""Play an environment yourself in the terminal, with the turn budget shown.

Type commands at the prompt. Meta-commands: :actions (the admissible actions), :hint (the
reference solver's next action, with --hints), :help, :quit. The game ends when the task is won
or lost, or when the budget is used up.
"""

from __future__ import annotations

import argparse

from agentgym_budget.cli.common import add_env_arguments, positive_int
from agentgym_budget.errors import did_you_mean
from agentgym_budget.runner.env_ref import EnvRef

__all__: list[str] = []

NAME = "play"
HELP = "play an environment in the terminal (budget shown)"

_HELP_TEXT = ":actions lists the admissible actions, :hint asks the solver (with --hints), :quit ends."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``play``.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_arguments(parser)
        >>> args = parser.parse_args(["TextWorld-Cooking-v0", "--env-args", "difficulty=1", "--budget", "15"])
        >>> args.id, args.env_args, args.budget, args.task
        ('TextWorld-Cooking-v0', 'difficulty=1', 15, None)
    """
    parser.add_argument("id", metavar="ID", help="registered environment id (see `agentgym-budget list`)")
    add_env_arguments(parser, env_required=True)
    parser.add_argument("--task", default=None, help="task id or index (default: drawn with --seed)")
    parser.add_argument("--budget", type=positive_int, default=30, help="turn budget (default 30)")
    parser.add_argument("--seed", type=int, default=0, help="reset seed (default 0)")
    parser.add_argument("--hints", action="store_true", help="allow :hint (computes the solver's plan each turn)")


_QUIT = (":quit", ":q", ":exit")
_META = (*_QUIT, ":actions", ":a", ":hint", ":help", ":h")


def _meta_command(command: str, info: dict, hints: bool) -> bool:
    """Answer a ``:`` meta-command (a misspelled one with the closest); ``False`` for a game command.

    Example:
        >>> _meta_command(":acton", {}, False)
        Unknown meta-command ':acton'. Did you mean ':actions'? :actions lists the admissible actions, :hint asks the solver (with --hints), :quit ends.
        True
        >>> _meta_command("go east", {}, False)
        False
    """
    if command in (":actions", ":a"):
        print("Admissible: " + " | ".join(info["admissible_actions"]))
    elif command == ":hint":
        hint = info.get("expert_action") if hints else None
        print(f"Hint: {hint}" if hint else "No hint (start with --hints to enable them).")
    elif command in (":help", ":h"):
        print(_HELP_TEXT)
    elif command.startswith(":"):
        print(f"Unknown meta-command {command!r}.{did_you_mean(command, _META)} {_HELP_TEXT}")
    else:
        return False
    return True


def run(args: argparse.Namespace) -> int:
    """Play until the episode ends or the player quits."""
    ref = EnvRef.parse(args.id, args.env_args, args.split)
    env = ref.make({"expert_action"} if args.hints else (), show_budget=True, max_turns=args.budget)
    task = int(args.task) if args.task is not None and args.task.lstrip("-").isdigit() else args.task
    try:
        observation, info = env.reset(seed=args.seed, options=None if task is None else {"task": task})
        goal = info["goal"]  # printed here unless the first observation already states it
        print(f"{ref.label}, task {info['task_id']}." + ("" if goal in observation else f" Goal: {goal}"))
        print(f"Budget: {args.budget} turns. {_HELP_TEXT}\n")
        print(observation)
        while True:
            try:
                line = input("> ")
            except EOFError:
                print()
                break
            command = line.strip()
            if command in _QUIT:
                break
            if _meta_command(command, info, args.hints):
                continue
            observation, _, terminated, truncated, info = env.step(line)
            print(observation)
            if terminated or truncated:
                turns = info["turn"]
                if info["won"]:
                    print(f"\n*** You won in {turns} turns. ***")
                elif info["lost"]:
                    print(f"\n*** You lost after {turns} turns. ***")
                else:
                    print(f"\n*** Out of turns ({turns} of {args.budget}). ***")
                break
    finally:
        env.close()
    return 0
