"""The serialised form of snapshots: versioned, self-describing, and loaded without executing code.

:meth:`EnvState.to_bytes <agentgym_budget.snapshots.state.EnvState.to_bytes>` writes a snapshot with
:func:`encode`; :meth:`EnvState.from_bytes <agentgym_budget.snapshots.state.EnvState.from_bytes>` reads it
with :func:`decode`. Pickling a snapshot goes through the same bytes, so a snapshot sent to
another process (``multiprocessing``, Ray) restores there whatever that process's
``PYTHONHASHSEED``, including when its buffers arrive read-only.

Layout (integers little-endian)::

    offset  size  field
    0       8     magic b"AGBSNAP\\0"
    8       4     format version (uint32, FORMAT_VERSION)
    12      4     header length H (uint32)
    16      16    BLAKE2b-128 digest of the header and the buffers (unkeyed: see below)
    32      H     header: a UTF-8 JSON object {"versions": {...}, "buffers": [...], "body": value}
    ...           zero padding to a multiple of 8, then the buffers, each at a multiple of 8

``versions`` maps ``agentgym-budget`` and every library whose state the snapshot holds (e.g.
``textworld`` and ``jericho`` for a TextWorld game) to its version; a snapshot only loads where
they are the same. ``buffers`` lists ``[offset, nbytes, dtype, shape]`` for each raw buffer
(``dtype`` is ``"bytes"`` for a ``bytes`` value). ``body`` encodes the value: ``null``, booleans,
integers, finite floats, strings and lists are themselves; every other value is a one-key object
naming its kind:

====================================  =====================================================
``{"t": [...]}``                      tuple
``{"d": [[key, value], ...]}``        dict (insertion order kept)
``{"s": [...]}`` / ``{"fs": [...]}``  set / frozenset (items sorted by their encoding)
``{"f": "nan"}``                      non-finite float (``"nan"``, ``"inf"``, ``"-inf"``)
``{"b": i}`` / ``{"a": i}``           bytes / numpy array held in buffer ``i``
``{"n": [dtype, value]}``             numpy scalar
``{"q": [[...], maxlen]}``            ``collections.deque``
``{"j": value}``                      plain JSON data (:class:`JsonData`)
``{"r": [name, {field: value}]}``     a record: one of the state classes in :data:`RECORDS`
====================================  =====================================================

Why this format rather than pickle: decoding only parses JSON, copies numeric buffers whose
dtype is in a fixed list, and builds dataclasses named in the closed table :data:`RECORDS`
from keyword arguments, so a snapshot file or message cannot run code; the JSON header stays
readable for debugging; the numeric buffers (a z-machine's memory) are stored raw, aligned,
and decoded without a copy.

The digest catches truncation and corruption in transit, not deliberate edits (anyone can recompute
it); for snapshots crossing a trust boundary, set a key and every snapshot is sealed with an HMAC
(:mod:`~agentgym_budget.snapshots.keys`).

Example:
    >>> from collections import deque
    >>> value = {"turn": 2, "budget": (5, None), "seen": {"b", "a"}, "last": deque([1.5], maxlen=3)}
    >>> decode(encode(value)) == value
    True
    >>> decode(b"not a snapshot")
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.SnapshotMismatchError: Not an agentgym-budget snapshot: the data does not start with b'AGBSNAP\\x00' (got b'not a sn', 14 bytes).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib
import json
import math
import struct
from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentgym_budget._version import __version__
from agentgym_budget.errors import SnapshotMismatchError, SnapshotUnsupportedError
from agentgym_budget.snapshots.keys import current_key, seal, unseal

__all__ = ["JsonData", "decode", "encode"]

MAGIC = b"AGBSNAP\x00"
"""The first bytes of every serialised snapshot."""
FORMAT_VERSION = 1
"""The snapshot format this code writes and reads; another version is refused."""
_PREFIX = struct.Struct("<8sII16s")
_ALIGN = 8

RECORDS: dict[str, str] = {
    "EnvState/1": "agentgym_budget.snapshots.state:EnvState",
    "ReplayLog/1": "agentgym_budget.snapshots.state:ReplayLog",
    "TextEnvState/1": "agentgym_budget.snapshots.state:TextEnvState",
    "Turn/1": "agentgym_budget.core.turn:Turn",
    "TextWorldState/1": "agentgym_budget.tasks.textworld.portable:PortableTextWorldState",
    "AlfworldState/1": "agentgym_budget.tasks.alfworld.portable:PortableAlfworldState",
    "AlfworldEnvState/1": "agentgym_budget.tasks.alfworld.portable:PortableAlfworldEnvState",
    "WebShopSession/1": "agentgym_budget.tasks.webshop.session:Session",
    "BabyAIState/1": "agentgym_budget.tasks.babyai.state:BabyAIState",
}
"""Every class a snapshot may hold, by record name: the only classes :func:`decode` builds.

A record class is a dataclass whose ``__snapshot_record__`` is its name here; it may list the
distributions its content depends on in ``__snapshot_libraries__``. A class whose instances
are not portable as they are (e.g. an engine state holding live interpreter objects) instead
defines ``portable()``, returning a record, and is encoded as that record. A record class whose
``__snapshot_trust__`` is true gets an attribute ``snapshot_sealed`` when decoded: whether the bytes
carried a seal checked against the snapshot key (:mod:`~agentgym_budget.snapshots.keys`), so that
its layer can check an unsealed one more deeply."""

_DTYPES = frozenset(
    {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64"}
    | {"complex64", "complex128"}
)


@dataclass(frozen=True)
class JsonData:
    """Plain JSON data (dicts with str keys, lists, str, int, finite float, bool, None), stored as is.

    Records use it for large regular structures (tables of facts, trees of actions) that would be
    slow to encode value by value. The encoder trusts the content; the decoder gives it back as
    parsed JSON (lists, never tuples).
    """

    value: Any


@functools.cache
def installed_versions(*distributions: str) -> dict[str, str]:
    """The installed versions of ``distributions`` (``"missing"`` for one that is not installed)."""
    from importlib import metadata

    versions = {}
    for name in distributions:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "missing"
    return versions


def _library_version() -> str:
    return __version__


# ---------------------------------------------------------------------------------------------- encoding
class _Encoder:
    def __init__(self) -> None:
        self.buffers: list[tuple[memoryview, str, list[int]]] = []
        self.libraries: set[str] = set()

    def buffer(self, data: memoryview, dtype: str, shape: list[int]) -> int:
        self.buffers.append((data, dtype, shape))
        return len(self.buffers) - 1

    def value(self, obj: Any, where: str) -> Any:
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        kind = type(obj)
        if kind is int:
            return obj
        if kind is float:
            return obj if math.isfinite(obj) else {"f": repr(obj)}
        if kind is list:
            return [self.value(item, f"{where}[{i}]") for i, item in enumerate(obj)]
        if kind is tuple:
            return {"t": [self.value(item, f"{where}[{i}]") for i, item in enumerate(obj)]}
        if kind is dict:
            return {"d": [[self.value(k, f"{where} key"), self.value(v, f"{where}[{k!r}]")] for k, v in obj.items()]}
        if kind is JsonData:
            return {"j": obj.value}
        if kind in (set, frozenset):
            items = sorted((self.value(item, f"{where} item") for item in obj), key=_sort_key)
            return {"s" if kind is set else "fs": items}
        if kind is bytes:
            return {"b": self.buffer(memoryview(obj), "bytes", [len(obj)])}
        if isinstance(obj, np.ndarray):
            return {"a": self._array(obj, where)}
        if isinstance(obj, np.generic):
            return {"n": [self._dtype(obj.dtype, where), self.value(obj.item(), where)]}
        if kind is deque:
            return {"q": [[self.value(item, f"{where}[{i}]") for i, item in enumerate(obj)], obj.maxlen]}
        name = getattr(kind, "__snapshot_record__", None)
        if name is not None:
            return self.record(obj, name, where)
        portable = getattr(obj, "portable", None)
        if callable(portable):
            return self.value(portable(), where)
        if isinstance(obj, (int, float, str, list, tuple, dict)):  # subclasses: encode as the base type
            base = next(b for b in (bool, int, float, str, list, tuple, dict) if isinstance(obj, b))
            return self.value(base(obj), where)
        raise SnapshotUnsupportedError(
            f"Cannot serialise {where}: a {kind.__module__}.{kind.__qualname__} is not plain data. Snapshots hold "
            "None, bool, int, float, str, bytes, lists, tuples, dicts, sets, deques, numpy arrays and the state "
            "classes of agentgym-budget; give the wrapper that holds it get_wrapper_state()/set_wrapper_state() "
            "returning plain data."
        )

    def record(self, obj: Any, name: str, where: str) -> Any:
        if name not in RECORDS:
            raise SnapshotUnsupportedError(
                f"Cannot serialise {where}: record {name!r} is not in agentgym_budget.snapshots.codec.RECORDS."
            )
        self.libraries.update(getattr(type(obj), "__snapshot_libraries__", ()))
        fields = {
            f.name: self.value(getattr(obj, f.name), f"{where}.{f.name}") for f in dataclasses.fields(obj) if f.init
        }
        return {"r": [name, fields]}

    def _array(self, array: np.ndarray, where: str) -> int:
        dtype = self._dtype(array.dtype, where)
        data = np.ascontiguousarray(array)
        return self.buffer(memoryview(data).cast("B"), dtype, list(array.shape))

    @staticmethod
    def _dtype(dtype: np.dtype, where: str) -> str:
        name = np.dtype(dtype).newbyteorder("<").name if dtype.byteorder == ">" else np.dtype(dtype).name
        if name not in _DTYPES:
            raise SnapshotUnsupportedError(
                f"Cannot serialise {where}: numpy dtype {dtype} is not numeric (expected one of {sorted(_DTYPES)})."
            )
        return name


def _sort_key(encoded: Any) -> str:
    return json.dumps(encoded, sort_keys=True, separators=(",", ":"))


def encode(value: Any) -> bytes:
    """The serialised form of ``value`` (see the module docstring).

    Raises:
        SnapshotUnsupportedError: ``value`` holds something that is not plain data or a state record.
    """
    encoder = _Encoder()
    body = encoder.value(value, type(value).__name__)
    table, offset = [], 0
    for data, dtype, shape in encoder.buffers:
        offset += -offset % _ALIGN
        table.append([offset, data.nbytes, dtype, shape])
        offset += data.nbytes
    versions = {"agentgym-budget": _library_version(), **installed_versions(*sorted(encoder.libraries))}
    header = json.dumps(
        {"versions": versions, "buffers": table, "body": body}, separators=(",", ":"), allow_nan=False
    ).encode("utf-8")
    pad = -(_PREFIX.size + len(header)) % _ALIGN
    parts = [header, b"\0" * pad]
    position = 0
    for (data, _, _), (start, _, _, _) in zip(encoder.buffers, table, strict=True):
        parts.append(b"\0" * (start - position))
        parts.append(data)
        position = start + data.nbytes
    payload = b"".join(parts)
    digest = hashlib.blake2b(payload, digest_size=16).digest()
    return seal(_PREFIX.pack(MAGIC, FORMAT_VERSION, len(header), digest) + payload)


# ---------------------------------------------------------------------------------------------- decoding
class _Decoder:
    def __init__(self, buffers: list[Any], sealed: bool) -> None:
        self.buffers = buffers
        self.sealed = sealed

    def value(self, obj: Any) -> Any:
        if obj is None or isinstance(obj, (bool, int, float, str)):
            return obj
        if isinstance(obj, list):
            return [self.value(item) for item in obj]
        if not isinstance(obj, dict) or len(obj) != 1:
            raise SnapshotMismatchError(f"Corrupt snapshot: unexpected value {str(obj)[:80]!r} in the body.")
        ((kind, payload),) = obj.items()
        if kind == "t":
            return tuple(self.value(item) for item in payload)
        if kind == "d":
            return {self.value(key): self.value(item) for key, item in payload}
        if kind == "j":
            return JsonData(payload)
        if kind == "s":
            return {self.value(item) for item in payload}
        if kind == "fs":
            return frozenset(self.value(item) for item in payload)
        if kind == "f":
            if payload not in ("nan", "inf", "-inf"):
                raise SnapshotMismatchError(f"Corrupt snapshot: bad float {payload!r}.")
            return float(payload)
        if kind in ("a", "b"):
            return self.buffers[payload]
        if kind == "n":
            dtype, item = payload
            return _scalar(dtype, self.value(item))
        if kind == "q":
            items, maxlen = payload
            return deque((self.value(item) for item in items), maxlen=maxlen)
        if kind == "r":
            name, fields = payload
            return self.record(name, fields)
        raise SnapshotMismatchError(f"Corrupt snapshot: unknown value kind {kind!r}.")

    def record(self, name: str, fields: dict[str, Any]) -> Any:
        cls = _record_class(name)
        expected = {f.name for f in dataclasses.fields(cls) if f.init}
        if not isinstance(fields, dict) or set(fields) != expected:
            got = sorted(fields) if isinstance(fields, dict) else type(fields).__name__
            raise SnapshotMismatchError(
                f"Corrupt snapshot: record {name} has fields {got}, expected {sorted(expected)}."
            )
        record = cls(**{key: self.value(item) for key, item in fields.items()})
        if getattr(cls, "__snapshot_trust__", False):
            object.__setattr__(record, "snapshot_sealed", self.sealed)
        return record


def _scalar(dtype: Any, item: Any) -> np.generic:
    """The numpy scalar ``{"n": [dtype, item]}``: the item must be a number the dtype holds exactly."""
    if dtype not in _DTYPES or isinstance(item, str | list | tuple | dict | type(None)):
        raise SnapshotMismatchError(f"Corrupt snapshot: numpy scalar {item!r:.40} of dtype {dtype!r}.")
    kind = np.dtype(dtype)
    if kind.kind in "iub" and (not isinstance(item, int) or not _fits(item, kind)):
        raise SnapshotMismatchError(f"Corrupt snapshot: {item!r:.40} is not a {dtype} value.")
    return kind.type(item)


def _fits(item: int, kind: np.dtype) -> bool:
    if kind.kind == "b":
        return item in (0, 1)
    info = np.iinfo(kind)
    return info.min <= item <= info.max


@functools.cache
def _record_class(name: str) -> type:
    target = RECORDS.get(name)
    if target is None:
        raise SnapshotMismatchError(
            f"The snapshot holds a record {name!r} this version of agentgym-budget does not know "
            f"(known: {', '.join(sorted(RECORDS))})."
        )
    module, qualname = target.split(":")
    cls = getattr(importlib.import_module(module), qualname)
    if getattr(cls, "__snapshot_record__", None) != name or not dataclasses.is_dataclass(cls):
        raise SnapshotMismatchError(f"{target} is not the record {name!r}.")
    return cls


def _buffers(table: Any, data: memoryview, start: int) -> list[Any]:
    if not isinstance(table, list):
        raise SnapshotMismatchError("Corrupt snapshot: the buffer table is not a list.")
    buffers: list[Any] = []
    size = len(data) - start
    for entry in table:
        offset, nbytes, dtype, shape = entry
        if not (isinstance(offset, int) and isinstance(nbytes, int) and offset >= 0 and offset + nbytes <= size):
            raise SnapshotMismatchError(f"Corrupt snapshot: buffer {entry!r} lies outside the data ({size} bytes).")
        raw = data[start + offset : start + offset + nbytes]
        if dtype == "bytes":
            buffers.append(bytes(raw))
            continue
        if dtype not in _DTYPES or not all(isinstance(n, int) and n >= 0 for n in shape):
            raise SnapshotMismatchError(f"Corrupt snapshot: buffer of dtype {dtype!r} and shape {shape!r}.")
        item = np.dtype(dtype).newbyteorder("<")
        if math.prod(shape) * item.itemsize != nbytes:
            raise SnapshotMismatchError(f"Corrupt snapshot: {nbytes} bytes do not hold a {dtype} array of {shape}.")
        buffers.append(np.frombuffer(raw, dtype=item).reshape(shape))
    return buffers


def _check_versions(versions: Any) -> None:
    if not isinstance(versions, dict):
        raise SnapshotMismatchError("Corrupt snapshot: the header has no version table.")
    here = {"agentgym-budget": _library_version(), **installed_versions(*sorted(set(versions) - {"agentgym-budget"}))}
    different = {name: (version, here[name]) for name, version in versions.items() if here[name] != version}
    if different:
        listed = "; ".join(
            f"{name} {then} (snapshot) vs {now} (here)" for name, (then, now) in sorted(different.items())
        )
        raise SnapshotMismatchError(
            f"This snapshot was written with other library versions: {listed}. Snapshots restore only with the "
            "versions they were taken with; restore it in an environment with those versions, or take it again here."
        )


def decode(data: bytes | bytearray | memoryview) -> Any:
    """The value serialised in ``data`` by :func:`encode`.

    ``data`` may be any buffer (``bytes``, a read-only ``memoryview`` of shared memory, ...);
    numpy arrays are decoded without a copy, so they are read-only views of it.

    Raises:
        SnapshotMismatchError: ``data`` is not a snapshot, is corrupted or truncated, or was written by
            another format or library version, or its seal does not match the snapshot key
            (:mod:`~agentgym_budget.snapshots.keys`).
    """
    sealed = current_key() is not None  # unseal refuses any other data when a key is set
    data = unseal(data)
    view = memoryview(data).cast("B") if not isinstance(data, bytes) else memoryview(data)
    if len(view) < _PREFIX.size or bytes(view[:8]) != MAGIC:
        raise SnapshotMismatchError(
            f"Not an agentgym-budget snapshot: the data does not start with {MAGIC!r} "
            f"(got {bytes(view[:8])!r}, {len(view)} bytes)."
        )
    _, version, header_size, digest = _PREFIX.unpack_from(view)
    if version != FORMAT_VERSION:
        raise SnapshotMismatchError(
            f"This snapshot uses format version {version}; this agentgym-budget ({_library_version()}) reads "
            f"version {FORMAT_VERSION}. Restore it with the agentgym-budget version that wrote it."
        )
    if hashlib.blake2b(view[_PREFIX.size :], digest_size=16).digest() != digest:
        raise SnapshotMismatchError(
            f"Corrupt snapshot: its {len(view)} bytes do not match the digest they were written with "
            "(truncated or altered in transit)."
        )
    end = _PREFIX.size + header_size
    try:
        header = json.loads(bytes(view[_PREFIX.size : end]).decode("utf-8"))
        _check_versions(header["versions"])
        start = end + (-end % _ALIGN)
        buffers = _buffers(header["buffers"], view, start)
        return _Decoder(buffers, sealed).value(header["body"])
    except SnapshotMismatchError:
        raise
    except RecursionError as err:
        raise SnapshotMismatchError("Corrupt snapshot: its header nests deeper than Python can read.") from err
    except (ValueError, KeyError, TypeError, IndexError, OverflowError, MemoryError) as err:
        raise SnapshotMismatchError(f"Corrupt snapshot: {type(err).__name__}: {err!s:.200}.") from err
