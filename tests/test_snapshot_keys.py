"""Keyed snapshot seals (HMAC) and refusals of forged or deeply nested snapshots."""

from __future__ import annotations

import hashlib
import struct

import numpy as np
import pytest

from agentgym_budget.core.env import Turn
from agentgym_budget.errors import InvalidOptionError, SnapshotMismatchError
from agentgym_budget.snapshots import keys as snapshot_keys
from agentgym_budget.snapshots.codec import FORMAT_VERSION, MAGIC, decode
from agentgym_budget.snapshots.state import EnvState, TextEnvState

_PREFIX = struct.Struct("<8sII16s")


@pytest.fixture(autouse=True)
def _no_key(monkeypatch):
    monkeypatch.delenv(snapshot_keys.ENV_VAR, raising=False)
    snapshot_keys.use_key(None)
    yield
    snapshot_keys.use_key(None)


def _state(task: str = "coin-l5-3") -> EnvState:
    turn = Turn("You see a door.", 0.0, False, False, 0.25, ("look",), "open the door", {"score": 1})
    base = TextEnvState(
        env_key=("CoinCollectorEnv", ("recipe", "r")),
        task_id=task,
        engine_seed=17,
        actions=("look",),
        last_turn=turn,
        episode_over=False,
        rng_state=np.random.default_rng(3).bit_generator.state,
        engine=None,
    )
    return EnvState(stack=("a.TurnBudget", "b.CoinCollectorEnv"), parts=((10, 1, False, True), base))


def test_a_sealed_snapshot_round_trips_and_an_edit_is_refused():
    snapshot_keys.use_key("job-42")
    data = _state().to_bytes()
    assert data.startswith(snapshot_keys.SEAL_MAGIC)
    assert EnvState.from_bytes(data) == _state()
    forged = bytearray(data)
    forged[-1] ^= 1
    with pytest.raises(SnapshotMismatchError, match="seal does not match"):
        EnvState.from_bytes(bytes(forged))
    with pytest.raises(SnapshotMismatchError, match="seal does not match"):
        EnvState.from_bytes(data[:40])


def test_an_unsealed_snapshot_is_refused_when_a_key_is_set_and_a_sealed_one_without(monkeypatch):
    plain = _state().to_bytes()
    monkeypatch.setenv(snapshot_keys.ENV_VAR, "from-the-environment")
    sealed = _state("coin-l5-4").to_bytes()
    with pytest.raises(SnapshotMismatchError, match="not sealed"):
        EnvState.from_bytes(plain)
    snapshot_keys.use_key("another key")
    with pytest.raises(SnapshotMismatchError, match="another key"):
        EnvState.from_bytes(sealed)
    monkeypatch.delenv(snapshot_keys.ENV_VAR)
    snapshot_keys.use_key(None)
    with pytest.raises(SnapshotMismatchError, match="use_key"):
        EnvState.from_bytes(sealed)
    assert EnvState.from_bytes(plain) == _state()


@pytest.mark.parametrize("key", [b"", "", 42])
def test_a_bad_key_is_a_typed_error(key):
    with pytest.raises(InvalidOptionError):
        snapshot_keys.use_key(key)


def _with_header(header: bytes) -> bytes:
    payload = header + b"\0" * (-(_PREFIX.size + len(header)) % 8)
    digest = hashlib.blake2b(payload, digest_size=16).digest()
    return _PREFIX.pack(MAGIC, FORMAT_VERSION, len(header), digest) + payload


@pytest.mark.parametrize("depth", [10_000, 200_000])
def test_a_deeply_nested_header_is_a_typed_error(depth):
    with pytest.raises(SnapshotMismatchError, match="Corrupt snapshot"):
        decode(_with_header(b"[" * depth + b"]" * depth))
    body = b'{"versions":{},"buffers":[],"body":' + b'{"t":[' * depth + b"1" + b"]}" * depth + b"}"
    with pytest.raises(SnapshotMismatchError, match="Corrupt snapshot"):
        decode(_with_header(body))
