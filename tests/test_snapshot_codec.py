"""The serialised snapshot format: round trips, refusals, corruption, and that decoding runs no code."""

from __future__ import annotations

import hashlib
import json
import math
import pickle
import struct
from collections import deque

import numpy as np
import pytest

from agentgym_budget.core.env import Turn
from agentgym_budget.errors import SnapshotMismatchError, SnapshotUnsupportedError
from agentgym_budget.snapshots import codec as snapshot_codec
from agentgym_budget.snapshots.codec import FORMAT_VERSION, MAGIC, JsonData, decode, encode
from agentgym_budget.snapshots.state import EnvState, ReplayLog, TextEnvState

_PREFIX = struct.Struct("<8sII16s")


def _rewrite_header(data: bytes, edit) -> bytes:
    """``data`` with its JSON header changed by ``edit`` and a valid digest (a well-formed forgery)."""
    _, version, size, _ = _PREFIX.unpack_from(data)
    header = json.loads(data[_PREFIX.size : _PREFIX.size + size])
    edit(header)
    rest = data[_PREFIX.size + size :]
    body = json.dumps(header, separators=(",", ":")).encode()
    # keep the buffers aligned: pad the new header to the old header's end alignment
    old_end = _PREFIX.size + size
    old_pad = -old_end % 8
    buffers = rest[old_pad:]
    pad = -(_PREFIX.size + len(body)) % 8
    payload = body + b"\0" * pad + buffers
    digest = hashlib.blake2b(payload, digest_size=16).digest()
    return _PREFIX.pack(MAGIC, version, len(body), digest) + payload


def _state() -> EnvState:
    turn = Turn("You see a door.", 0.0, False, False, 0.25, ("look", "open door"), "open the door", {"score": 1})
    base = TextEnvState(
        env_key=("CoinCollectorEnv", ("recipe", "r")),
        task_id="coin-l5-3",
        engine_seed=17,
        actions=("look",),
        last_turn=turn,
        episode_over=False,
        rng_state=np.random.default_rng(3).bit_generator.state,
        engine=None,
    )
    return EnvState(stack=("a.TurnBudget", "b.CoinCollectorEnv"), parts=((10, 1, False, True), base))


VALUES = [
    None,
    True,
    -(2**80),
    1.5,
    float("inf"),
    "caf\u00e9\n",
    b"\x00\xff",
    [1, [2, (3, None)]],
    (1, "a"),
    {"a": 1, 2: "b", (1, 2): [3]},
    {3, 1, 2},
    frozenset({"x", "y"}),
    deque([1, 2], maxlen=5),
    np.int64(7),
    np.float32(0.5),
    np.bool_(True),
    JsonData({"k": [1, "v", None]}),
]


@pytest.mark.parametrize("value", VALUES, ids=[type(v).__name__ for v in VALUES])
def test_values_round_trip_with_their_types(value):
    again = decode(encode(value))
    assert again == value and type(again) is type(value)
    if isinstance(value, deque):
        assert again.maxlen == value.maxlen


def test_nan_and_arrays_round_trip():
    array = np.arange(12, dtype=np.int32).reshape(3, 4)
    nan, again = decode(encode((float("nan"), array)))
    assert math.isnan(nan)
    assert again.dtype == np.int32 and again.shape == (3, 4) and np.array_equal(again, array)
    assert not again.flags.writeable, "arrays are decoded as read-only views of the data"


def test_states_round_trip_equal_and_hash_alike():
    state = _state()
    data = state.to_bytes()
    assert data.startswith(MAGIC) and _PREFIX.unpack_from(data)[1] == FORMAT_VERSION
    again = EnvState.from_bytes(data)
    assert again == state and hash(again) == hash(state) and again is not state
    assert again.parts[-1].last_turn == state.parts[-1].last_turn
    assert {state, again} == {state}
    other = EnvState(stack=state.stack, parts=((10, 2, False, True), state.parts[1]))
    assert other != state


def test_header_is_readable_json_with_versions():
    data = _state().to_bytes()
    _, _, size, _ = _PREFIX.unpack_from(data)
    header = json.loads(data[_PREFIX.size : _PREFIX.size + size])
    assert header["versions"]["agentgym-budget"] == snapshot_codec._library_version()
    assert header["body"]["r"][0] == "EnvState/1"


def test_copies_of_an_immutable_state_are_the_state():
    import copy

    state = _state()
    assert copy.copy(state) is state and copy.deepcopy({"s": state})["s"] is state


@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_pickle_goes_through_the_serialised_form(protocol):
    state = _state()
    data = pickle.dumps(state, protocol=protocol)
    assert MAGIC in data
    assert pickle.loads(data) == state


def test_pickle_out_of_band_buffers_arrive_read_only():
    state = _state()
    buffers: list[pickle.PickleBuffer] = []
    data = pickle.dumps(state, protocol=5, buffer_callback=buffers.append)
    assert buffers, "protocol 5 ships the serialised form out of band, as Ray's object store does"
    readonly = [memoryview(bytes(b.raw())).toreadonly() for b in buffers]
    assert pickle.loads(data, buffers=readonly) == state


def test_from_bytes_accepts_any_buffer():
    data = _state().to_bytes()
    assert EnvState.from_bytes(memoryview(data).toreadonly()) == EnvState.from_bytes(bytearray(data))


def test_other_library_versions_are_refused_with_both_versions():
    data = _rewrite_header(_state().to_bytes(), lambda h: h["versions"].update({"agentgym-budget": "0.0.1"}))
    with pytest.raises(SnapshotMismatchError, match=r"agentgym-budget 0\.0\.1 \(snapshot\) vs .* \(here\)"):
        EnvState.from_bytes(data)
    data = _rewrite_header(_state().to_bytes(), lambda h: h["versions"].update({"textworld": "0.9"}))
    with pytest.raises(SnapshotMismatchError, match=r"textworld 0\.9"):
        EnvState.from_bytes(data)


def test_other_format_versions_are_refused():
    data = bytearray(_state().to_bytes())
    struct.pack_into("<I", data, 8, FORMAT_VERSION + 1)
    with pytest.raises(SnapshotMismatchError, match=f"format version {FORMAT_VERSION + 1}"):
        decode(bytes(data))


@pytest.mark.parametrize("damage", ["flip", "truncate", "extend"])
def test_corruption_is_detected(damage):
    data = bytearray(_state().to_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0x10
    elif damage == "truncate":
        del data[-7:]
    else:
        data += b"\0"
    with pytest.raises(SnapshotMismatchError, match="Corrupt snapshot"):
        EnvState.from_bytes(bytes(data))


@pytest.mark.parametrize("junk", [b"", b"AGBSNAP", b"\x80\x04\x95" + b"\0" * 40, b"x" * 100])
def test_junk_is_not_a_snapshot(junk):
    with pytest.raises(SnapshotMismatchError, match="Not an agentgym-budget snapshot"):
        decode(junk)


def test_from_bytes_checks_the_class():
    data = ReplayLog(fingerprint=(), seed=1, options=(), actions=(1, 2)).to_bytes()
    with pytest.raises(SnapshotMismatchError, match=r"holds a ReplayLog; EnvState\.from_bytes reads"):
        EnvState.from_bytes(data)


def test_unknown_records_and_unsafe_dtypes_are_refused_not_imported():
    data = encode(_state())

    def unknown(header):
        header["body"]["r"][0] = "os:system"

    with pytest.raises(SnapshotMismatchError, match="record 'os:system'"):
        decode(_rewrite_header(data, unknown))

    def extra_field(header):
        header["body"]["r"][1]["evil"] = 1

    with pytest.raises(SnapshotMismatchError, match="fields"):
        decode(_rewrite_header(data, extra_field))

    array = encode(np.arange(4, dtype=np.int64))
    with pytest.raises(SnapshotMismatchError, match="dtype 'object'"):
        decode(_rewrite_header(array, lambda h: h["buffers"][0].__setitem__(2, "object")))
    with pytest.raises(SnapshotMismatchError, match="outside the data"):
        decode(_rewrite_header(array, lambda h: h["buffers"][0].__setitem__(1, 10**9)))


def test_decoding_never_unpickles(monkeypatch):
    """A pickle payload inside a snapshot stays bytes: decoding never calls pickle."""

    class Boom:
        def __reduce__(self):
            return (print, ("pwned",))

    payload = pickle.dumps(Boom())
    data = encode({"payload": payload})

    def forbidden(*args, **kwargs):
        raise AssertionError("decode called pickle")

    monkeypatch.setattr(pickle, "loads", forbidden)
    monkeypatch.setattr(pickle, "load", forbidden)
    assert decode(data) == {"payload": payload}


def test_non_plain_parts_are_refused_with_where_they_are():
    class Opaque:
        pass

    state = EnvState(stack=("w",), parts=({"_thing": Opaque()},))
    with pytest.raises(SnapshotUnsupportedError, match=r"EnvState\.parts\[0\]\['_thing'\].*Opaque"):
        state.to_bytes()
    with pytest.raises(SnapshotUnsupportedError):
        pickle.dumps(state)
    twin = EnvState(stack=("w",), parts=({"_thing": state.parts[0]["_thing"]},))
    assert twin == state, "equality still works field by field"
    with pytest.raises(SnapshotUnsupportedError, match="not numeric"):
        encode(np.array(["a"], dtype=object))
