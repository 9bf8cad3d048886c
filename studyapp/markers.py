"""Two small JSON files that let studyapp notice a lost history and a shared vault.

- `<data dir>/data-dir.json`: this data dir's id and the last healthy state of its database
  (its id, oldest note and review count), or the loss it detected and the user has not yet dealt
  with (restore or rebuild).
- `<vault>/.studyapp/vault.json`: the vault's id and the data dir that records its reviews.
  `.studyapp/` is hidden, so the vault loader never takes it for notes; it is the vault's own
  folder for studyapp's files (the per-device review log of issue 14 will live there too).

Markers are advice, never a reason to fail: one that cannot be read counts as absent, and one
that cannot be written (a read-only vault, a full disk) is skipped and tried again next time.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from enum import Enum
from pathlib import Path
from typing import TypeVar

from studyapp.atomic import atomic_create_bytes, atomic_write_bytes

M = TypeVar("M", "DataDirMarker", "VaultMarker")


class LossReason(Enum):
    """How the database that held the history went away."""

    MISSING = "missing"
    EMPTY = "empty"
    REPLACED = "replaced"


@dataclass
class KnownHistory:
    """The database as last seen healthy."""

    database_id: int
    oldest_note: str
    reviews: int
    seen_at: str
    """ISO instant (real clock)."""


@dataclass
class LostHistory:
    """A history this data dir had and its database no longer holds."""

    reason: LossReason
    reviews_before: int
    seen_at: str
    """When the lost history was last seen (ISO instant)."""
    detected_at: str


@dataclass
class DataDirMarker:
    """`<data dir>/data-dir.json`."""

    id: str
    known: KnownHistory | None = None
    lost: LostHistory | None = None

    @classmethod
    def new(cls) -> DataDirMarker:
        import uuid  # with `socket` below: imported when used, not by every command

        return cls(id=uuid.uuid4().hex)


@dataclass
class VaultOwner:
    """The data dir that records a vault's reviews."""

    data_dir_id: str
    data_dir: str
    host: str
    since: str


@dataclass
class VaultMarker:
    """`<vault>/.studyapp/vault.json`."""

    vault_id: str
    owner: VaultOwner | None = None


def this_host() -> str:
    try:
        import socket

        return socket.gethostname() or "this machine"
    except OSError:
        return "this machine"


def read_data_dir_marker(path: Path) -> DataDirMarker | None:
    data = _read_json(path)
    try:
        known = data.get("known")
        lost = data.get("lost")
        return DataDirMarker(
            id=str(data["id"]),
            known=None if known is None else KnownHistory(
                int(known["database_id"]), str(known["oldest_note"]), int(known["reviews"]),
                str(known["seen_at"])),
            lost=None if lost is None else LostHistory(
                LossReason(lost["reason"]), int(lost["reviews_before"]), str(lost["seen_at"]),
                str(lost["detected_at"])),
        )
    except (AttributeError, KeyError, TypeError, ValueError):
        return None


def read_vault_marker(path: Path) -> VaultMarker | None:
    data = _read_json(path)
    try:
        owner = data.get("owner")
        return VaultMarker(
            vault_id=str(data["vault_id"]),
            owner=None if owner is None else VaultOwner(
                str(owner["data_dir_id"]), str(owner["data_dir"]), str(owner["host"]),
                str(owner["since"])),
        )
    except (AttributeError, KeyError, TypeError, ValueError):
        return None


def write_marker(path: Path, marker: DataDirMarker | VaultMarker) -> bool:
    """Write a marker atomically; False when it could not be written (never raises OSError)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, _marker_bytes(marker))
    except OSError:
        return False
    return True


def create_marker(path: Path, marker: M, read: Callable[[Path], M | None]) -> tuple[M, bool]:
    """The marker at `path`, made now with `marker`'s new id where there is none: (the marker,
    whether it is on disk). Created only if absent, so that commands started at once on a new
    data dir or vault agree on its id: each made up its own and wrote it over the others', and
    those whose id lost found the database bound to "another vault" (the same one) and
    refused, or logged under a device id no marker names. A marker there that cannot be read
    is replaced, as `write_marker` would."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_create_bytes(path, _marker_bytes(marker))
        return marker, True
    except FileExistsError:
        found = read(path)
        if found is not None:
            return found, True
    except OSError:
        return marker, False
    return marker, write_marker(path, marker)


def _marker_bytes(marker: DataDirMarker | VaultMarker) -> bytes:
    text = json.dumps(asdict(marker), indent=2, default=lambda v: v.value if isinstance(v, Enum) else v)
    return (text + "\n").encode()


def _read_json(path: Path):
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}


def same_marker(a, b) -> bool:
    return a is not None and b is not None and asdict(a) == asdict(b)
