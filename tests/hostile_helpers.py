"""Hostile-input scenarios run in a child process, so that a crash of the C interpreter fails a test.

``python -m tests.hostile_helpers zstate`` restores into one TextWorld env every crafted snapshot of
:data:`ZSTATE_EDITS` (each a genuine snapshot with one interpreter field changed, re-encoded with a
valid digest), expects a typed refusal for each, then restores the genuine snapshot and checks that
the game goes on exactly as before. It prints one JSON line: ``{"refused": [...], "same": bool}``.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import agentgym_budget  # noqa: F401  (registers the ids)
from agentgym_budget.errors import SnapshotMismatchError
from agentgym_budget.snapshots.state import EnvState
from agentgym_budget.tasks.textworld import games
from agentgym_budget.wrappers import StateSnapshot

__all__ = ["ZSTATE_EDITS", "babyai_edits", "forge", "forge_babyai", "hostile_story", "main"]


def _storew(table: int, index: int, value: int) -> bytes:
    """``@storew table index value`` (VAR form; operand types large, small, small)."""
    return bytes([0xE1, 0x17, table >> 8, table & 0xFF, index, value])


def _unlink_loop(story: bytes) -> bytes:
    """Object 1's parent becomes 2, object 2's child list loops (2 -> 3 -> 3 ...), then ``@remove_obj 1``.

    frotz's ``unlink_object`` then walks 2's child list looking for 1, inside one instruction, forever.
    Version 4+ entries: 14 bytes after 63 default words; parent, sibling, child at +6, +8, +10.
    """
    objects = int.from_bytes(story[0x0A:0x0C], "big")
    entry = lambda number, field: (126 + (number - 1) * 14 + field) // 2  # noqa: E731  (word index)
    return (
        _storew(objects, entry(1, 6), 2) + _storew(objects, entry(2, 10), 3) + _storew(objects, entry(3, 8), 3)
    ) + bytes([0x99, 0x01])  # 1OP remove_obj, small constant 1


_STORY_PATCHES: dict[str, Callable[[bytes], bytes]] = {
    "loop": lambda story: bytes([0x8C, 0xFF, 0xFF]),  # jump -1: the instruction jumps to itself
    "illegal": lambda story: bytes([0x00, 0x01, 0x01]),  # 2OP opcode 0: illegal
    "unlink": _unlink_loop,  # a loop inside one instruction, where the halt flag is not read
    "div0": lambda story: bytes([0x17, 0x07, 0x00, 0x00]),  # @div 7 0 -> sp: frotz divides anyway (SIGFPE)
    "mod0": lambda story: bytes([0x18, 0x07, 0x00, 0x00]),  # @mod 7 0 -> sp
    "window": lambda story: bytes([0xEB, 0x3F, 0x0B, 0x25]),  # @set_window 2853: frotz writes past its table
    "call": lambda story: bytes([0xE0, 0x3F, 0xFF, 0xFF, 0x00]),  # @call_vs 0xFFFF: a routine past the story's end
}


def hostile_story(kind: str, folder: Path) -> Path:
    """A generated TextWorld game whose first instructions are replaced (``kind``: a key of ``_STORY_PATCHES``).

    The story's checksum is recomputed, so the file passes every check of a sound story file.
    """
    source = Path(games.generate_game(games.coin_collector_recipe(level=3), seed=0, split="train"))
    data = bytearray(source.read_bytes())
    start = int.from_bytes(data[6:8], "big")
    patch = _STORY_PATCHES[kind](bytes(data))
    data[start : start + len(patch)] = patch
    length = int.from_bytes(data[0x1A:0x1C], "big") * 8
    data[0x1C:0x1E] = (sum(data[0x40:length]) % 65536).to_bytes(2, "big")
    target = folder / f"{kind}.z8"
    target.write_bytes(bytes(data))
    shutil.copyfile(source.with_suffix(".json"), target.with_suffix(".json"))
    return target


def _registers(index: int, value: int) -> Callable[[Any], dict[str, Any]]:
    def edit(portable: Any) -> dict[str, Any]:
        registers = list(portable.registers)
        registers[index] = value
        return {"registers": tuple(registers)}

    return edit


def _ram_byte(offset_of: Callable[[Any], int], value: int) -> Callable[[Any], dict[str, Any]]:
    def edit(portable: Any) -> dict[str, Any]:
        ram = np.array(portable.ram)
        ram[offset_of(ram)] = value
        return {"ram": ram}

    return edit


ZSTATE_EDITS: dict[str, Callable[[Any], dict[str, Any]]] = {
    "pc 2**31-1": _registers(0, 2**31 - 1),
    "pc -1": _registers(0, -1),
    "pc past the story": _registers(0, 10**7),
    "sp 10**6": _registers(1, 10**6),
    "fp 10**6": _registers(2, 10**6),
    "fp -5": _registers(2, -5),
    "sp above fp": _registers(1, 1024),
    "frame count 10**6": _registers(3, 10**6),
    "frame count 0": _registers(3, 0),
    "opcode 4096": _registers(4, 4096),
    "rng interval -1": _registers(6, -1),
    "8-byte stack": lambda p: {"stack": np.zeros(8, dtype=np.uint8)},
    "8-byte RAM": lambda p: {"ram": np.zeros(8, dtype=np.uint8)},
    "RAM one byte short": lambda p: {"ram": np.array(p.ram[:-1])},
    "int16 RAM": lambda p: {"ram": np.zeros(p.ram.size // 2, dtype=np.int16)},
    "2-D stack": lambda p: {"stack": np.array(p.stack).reshape(2, -1)},
    "header object-table address": _ram_byte(lambda ram: 0x0A, 0xFF),
    "header static base": _ram_byte(lambda ram: 0x0E, 0x00),
    "zeroed frame chain": lambda p: {"stack": np.zeros_like(p.stack)},
    "10 KB narrative": lambda p: {"narrative": b"x" * 10_000},
}


def forge(data: bytes, edit: Callable[[Any], dict[str, Any]]) -> bytes:
    """``data`` (a TextWorld stack's snapshot) with its interpreter state edited, under a valid digest."""
    snap = EnvState.from_bytes(data)
    base = snap.parts[-1]
    engine = dataclasses.replace(base.engine, **edit(base.engine))
    parts = (*snap.parts[:-1], dataclasses.replace(base, engine=engine))
    return dataclasses.replace(snap, parts=parts).to_bytes()


def forge_babyai(data: bytes, **changes: Any) -> EnvState:
    """``data`` (a BabyAI stack's snapshot) with fields of its engine state changed, under a valid digest."""
    snap = EnvState.from_bytes(data)
    base = snap.parts[-1]
    parts = (*snap.parts[:-1], dataclasses.replace(base, engine=dataclasses.replace(base.engine, **changes)))
    return EnvState.from_bytes(dataclasses.replace(snap, parts=parts).to_bytes())


def babyai_edits(engine: Any) -> dict[str, dict[str, Any]]:
    """Named edits of a genuine BabyAI engine state (``BabyAIState``), each one a state no episode reaches."""
    objects, (x, y, direction) = list(engine.objects), engine.agent
    first = next(i for i, kind in enumerate(engine.kinds) if kind[0] != 4)  # a key, ball or box
    other = objects[(first + 1) % len(objects)]
    ox, oy = objects[first][:2]

    def moved(entry: tuple[int, int, int, int]) -> tuple[tuple[int, int, int, int], ...]:
        return tuple(entry if i == first else o for i, o in enumerate(objects))

    return {
        "grid size": {"size": (engine.size[0] + 1, engine.size[1])},
        "one object short": {"objects": tuple(objects[:-1])},
        "unknown object code": {"kinds": ((99, 0), *engine.kinds[1:])},
        "another colour": {"kinds": ((engine.kinds[0][0], (engine.kinds[0][1] + 1) % 6), *engine.kinds[1:])},
        "object outside the grid": {"objects": moved((engine.size[0] + 3, oy, 0, 0))},
        "negative position": {"objects": moved((-5, oy, 0, 0))},
        "object in a wall": {"objects": moved((0, 0, 0, 0))},
        "two objects on a cell": {"objects": moved((other[0], other[1], 0, 0))},
        "object under the agent": {"objects": moved((x, y, 0, 0))},
        "unknown place": {"objects": moved((ox, oy, 7, 0))},
        "carried, not marked": {"objects": moved((-1, -1, 1, 0))},
        "carrying nothing placed": {"carrying": first},
        "agent in a wall": {"agent": (0, 0, direction)},
        "agent outside": {"agent": (x, 10**6, direction)},
        "agent direction 4": {"agent": (x, y, 4)},
        "agent on an object": {"agent": (ox, oy, direction)},
        "negative step count": {"step_count": -1},
        "float step count": {"step_count": 2.5},
        "verifier shape": {"verifier": ()},
        "verifier value": {"verifier": tuple(("won", memory[1]) for memory in engine.verifier)},
        "tracked position outside": {"positions": tuple(((99, 99),) for _ in engine.positions)},
        "plan of other commands": {"plan": ("fly",)},
        "plan too long": {"plan": ("drop",) * 5_000},
        "first plan negative": {"first_plan": -3},
    }


def _play(env: gym.Env, data: bytes) -> list[str]:
    env.restore(EnvState.from_bytes(data))
    return [env.step(action)[0] for action in ("inventory", "look", "go north")]


def zstate() -> dict[str, Any]:
    """Restore every forged snapshot, then the genuine one (see the module docstring)."""
    env = StateSnapshot(gym.make("agentgym_budget/TextWorld-Cooking-v0", difficulty=3))
    env.reset(seed=0)
    env.step("look")
    genuine = env.snapshot().to_bytes()
    before = _play(env, genuine)
    refused = []
    for name, edit in ZSTATE_EDITS.items():
        try:
            env.restore(EnvState.from_bytes(forge(genuine, edit)))
        except SnapshotMismatchError:
            refused.append(name)
    return {"refused": refused, "same": _play(env, genuine) == before}


def main() -> None:
    """Run the scenario named by ``sys.argv[1]`` and print its result as JSON."""
    warnings.simplefilter("ignore")
    print(json.dumps({"zstate": zstate}[sys.argv[1]]()))


if __name__ == "__main__":
    main()
