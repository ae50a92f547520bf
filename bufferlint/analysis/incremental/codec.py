"""The analysis's values as JSON, and equality that sees everything (traces included).

The cache never holds pickle (reading a cache folder must not run code, ``bufferlint.cache``),
so the recorded analyses (``analysis.replay``) are written as JSON: each object of an
allowed class becomes a row of a shared table (an object met twice is written once), and
reading builds only those classes. Anything else cannot be encoded (``Unencodable``): the
analysis that holds it is not recorded, and an edit to its function is analysed afresh.

``digest`` fingerprints a value field by field, including the fields that ``==`` ignores
(traces): a replayed analysis is accepted only if it wrote and produced exactly what the
recorded one did, down to the trace a finding will show.
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path, PurePath

from bufferlint.analysis.transfer.call_project import CallEdge
from bufferlint.analysis.domain.conditions import ParamTest
from bufferlint.analysis.domain.limits import Limit
from bufferlint.analysis.frontend.constants import DeviceObject
from bufferlint.analysis.domain.state import Pending
from bufferlint.analysis.domain.summaries import FieldStore, ParamCall, SinkReach, Site, Summary
from bufferlint.analysis.domain.values import Borrow, BuiltByParameter, Cleared, Cond, Field, ParamRef, Preset, Produced, Value
from bufferlint.findings import Span, TraceStep
from bufferlint.hazards import Hazard

CLASSES = {cls.__name__: cls for cls in (
    Borrow, Cleared, Cond, ParamRef, ParamTest, Preset, Value, FieldStore, SinkReach, Site, Summary, Pending, Span, TraceStep,
    ParamCall, Limit, DeviceObject, Produced, Field, BuiltByParameter,
)}
FIELDS = {name: tuple(f.name for f in dataclasses.fields(cls)) for name, cls in CLASSES.items()}


class Unencodable(Exception):
    """A value of a class the codec does not know (or a malformed document)."""


class Encoder:
    """Encodes values into rows of one table (``rows``), objects shared by identity once."""

    def __init__(self) -> None:
        self.rows: list = []
        self._seen: dict[int, int] = {}
        self._keep: list = []  # the encoded objects stay alive, so their ids stay theirs
        self._scalars: dict[str, int] = {}

    def encode(self, value):
        kind = type(value)
        if kind in _SCALAR_TYPES or isinstance(value, (bool, int, float, str)):
            return value
        if isinstance(value, tuple) and _only_scalars(value):
            # Questions and names: small, common, and equal ones are made anew each time, so
            # they are shared by what they say (``repr`` tells 1 from True), not by identity.
            text = repr(value)
            known = self._scalars.get(text)
            if known is None:
                known = self._scalars[text] = len(self.rows)
                self.rows.append({"t": list(value)})
            return {"r": known}
        known = self._seen.get(id(value))
        if known is not None:
            return {"r": known}
        name = kind.__name__
        if CLASSES.get(name) is kind:  # the analysis's values (none of them a tuple, list, set...)
            row = {"c": name, "f": [self.encode(getattr(value, f)) for f in FIELDS[name]]}
        elif isinstance(value, tuple):
            row = {"t": [self.encode(v) for v in value]}
        elif isinstance(value, list):
            row = {"l": [self.encode(v) for v in value]}
        elif isinstance(value, (frozenset, set)):
            row = {"s" if isinstance(value, frozenset) else "m": [self.encode(v) for v in value]}
        elif isinstance(value, dict):
            row = {"d": [[self.encode(k), self.encode(v)] for k, v in value.items()]}
        elif isinstance(value, PurePath):
            row = {"p": str(value)}
        elif isinstance(value, bytes):
            row = {"b": value.decode("latin-1")}
        elif isinstance(value, Hazard):
            row = {"z": value.name}
        elif isinstance(value, CallEdge):
            row = {"e": [self.encode(getattr(value, f)) for f in CallEdge.__slots__]}
        else:
            raise Unencodable(name)
        self._keep.append(value)
        self._seen[id(value)] = len(self.rows)
        self.rows.append(row)
        return {"r": len(self.rows) - 1}


class Decoder:
    """Builds the values of a table written by ``Encoder`` (rows decoded once each)."""

    def __init__(self, rows: list) -> None:
        if not isinstance(rows, list):
            raise Unencodable("rows")
        self.rows = rows
        self._done: dict[int, object] = {}

    def decode(self, data):
        if data is None or isinstance(data, (bool, int, float, str)):
            return data
        if not isinstance(data, dict) or not isinstance(data.get("r"), int):
            raise Unencodable("reference")
        ref = data["r"]
        if ref in self._done:
            return self._done[ref]
        if not 0 <= ref < len(self.rows) or not isinstance(self.rows[ref], dict):
            raise Unencodable("reference")
        row = self.rows[ref]
        value = self._build(row)
        self._done[ref] = value
        return value

    def _build(self, row: dict):
        try:
            if "t" in row:
                return tuple(self.decode(v) for v in row["t"])
            if "l" in row:
                return [self.decode(v) for v in row["l"]]
            if "s" in row:
                return frozenset(self.decode(v) for v in row["s"])
            if "m" in row:
                return {self.decode(v) for v in row["m"]}
            if "d" in row:
                return {self.decode(k): self.decode(v) for k, v in row["d"]}
            if "p" in row:
                return Path(row["p"])
            if "b" in row:
                return row["b"].encode("latin-1")
            if "z" in row:
                return Hazard[row["z"]]
            if "e" in row:
                return CallEdge(*(self.decode(v) for v in row["e"]))
            cls = CLASSES[row["c"]]
            values = [self.decode(v) for v in row["f"]]
            if len(values) != len(FIELDS[row["c"]]):
                raise Unencodable(row["c"])
            return cls(**dict(zip(FIELDS[row["c"]], values)))
        except (KeyError, TypeError, ValueError) as exc:
            raise Unencodable(str(exc)) from exc


def digest(value, memo: dict | None = None) -> bytes:
    """A fingerprint of ``value`` that sees every field, traces included, and does not
    depend on the order of sets (nor on the hash seed): what a replayed analysis's writes
    and outcome are compared by. ``memo`` shares the work on objects met again (by
    identity; the caller keeps them alive) and on names and numbers (by value)."""
    return _digest(value, {} if memo is None else memo)


def _digest(value, memo: dict) -> bytes:
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        # Names and numbers recur all over (every field of every value): hashed once each.
        # Keyed with their type, as 1 and True are equal keys; floats are not (0.0 == -0.0).
        key = (kind, value)
        known = memo.get(key)
        if known is None:
            known = memo[key] = _hash(repr(value).encode("utf-8", "surrogatepass"))
        return known
    if isinstance(value, (bool, int, float, str)):
        return _hash(repr(value).encode("utf-8", "surrogatepass"))
    known = memo.get(id(value))
    if known is not None:
        return known[0]
    plain = _plain(value)
    if plain is not None:  # a write's names, flags and parameter sets: one hash
        out = _hash(b"P" + plain.encode("utf-8", "surrogatepass"))
    else:
        out = _hash(b"\0".join(_parts(value, kind, memo)))
    memo[id(value)] = (out, value)
    return out


def _parts(value, kind: type, memo: dict) -> list[bytes]:
    """What the fingerprint of a value that is no scalar hashes (joined by NUL)."""
    name = kind.__name__
    if CLASSES.get(name) is kind:
        return [name.encode()] + [_digest(getattr(value, f), memo) for f in FIELDS[name]]
    if kind is tuple or isinstance(value, tuple):
        return [b"t"] + [_digest(v, memo) for v in value]
    if isinstance(value, list):
        return [b"l"] + [_digest(v, memo) for v in value]
    if isinstance(value, (frozenset, set)):
        return [b"s"] + sorted(_digest(v, memo) for v in value)
    if isinstance(value, dict):
        return [b"d"] + sorted(_digest(k, memo) + _digest(v, memo) for k, v in value.items())
    if isinstance(value, PurePath):
        return [b"p", str(value).encode("utf-8", "surrogatepass")]  # undecodable file names too
    if isinstance(value, bytes):
        return [b"b", value]
    if isinstance(value, Hazard):
        return [b"z", value.name.encode()]
    if isinstance(value, CallEdge):
        return [b"e"] + [_digest(getattr(value, f), memo) for f in CallEdge.__slots__]
    raise Unencodable(name)


_SCALARS = (bool, int, float, str, type(None))
_SCALAR_TYPES = frozenset(_SCALARS)


def _plain(value) -> str | None:
    """A canonical text of tuples and frozensets of scalars (sets sorted), else None."""
    kind = type(value)
    if kind in _SCALARS:
        return repr(value)
    if kind is tuple or kind is frozenset:
        parts = []
        for v in value:
            part = _plain(v)
            if part is None:
                return None
            parts.append(part)
        return ("(" + ",".join(parts) + ")") if kind is tuple else ("{" + ",".join(sorted(parts)) + "}")
    return None


def _only_scalars(value: tuple) -> bool:
    """Are all items None, bools, numbers or strings (their types looked at once each)?"""
    kinds = set(map(type, value))
    return kinds <= _SCALAR_TYPES or all(issubclass(kind, _SCALARS) for kind in kinds)


def _hash(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()
