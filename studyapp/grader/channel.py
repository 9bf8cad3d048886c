"""The one frame a child sends back, and how the parent tells it from anything else on the pipe.

After the `READY` byte, a child's harness writes exactly one frame: a magic, the run's nonce
(read by the harness from a pipe that learner code never sees open), the payload's length and
the payload. Anything else on the pipe (bytes before the frame, a second frame, a frame with
another nonce or a wrong length) was written by learner code and is refused as tampering.

This proves only that the frame came through the harness: learner code runs in the same process
and could dig the nonce out of memory. What makes a forged frame worthless is the parent's own
checking: it owns the cases and the oracle, and demands one plain-tensor result per case.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass

READY = b"R"
"""First byte a child sends: its learner code starts now, so the wall clock starts now."""
MAGIC = b"studyapp-result\0"
NONCE_BYTES = 16
_LENGTH = struct.Struct("<Q")


def new_nonce() -> bytes:
    return os.urandom(NONCE_BYTES)


def seal(nonce: bytes, payload: bytes) -> bytes:
    return MAGIC + nonce + _LENGTH.pack(len(payload)) + payload


@dataclass(frozen=True)
class Tampered:
    """The pipe held bytes the harness did not write."""

    reason: str


def open_frame(data: bytes, nonce: bytes) -> bytes | Tampered | None:
    """The payload of the single frame in `data` (what followed READY); None when nothing came."""
    if not data:
        return None
    header = len(MAGIC) + NONCE_BYTES + _LENGTH.size
    if not data.startswith(MAGIC):
        return Tampered(f"{len(data)} bytes that are not the grader's result frame")
    if len(data) < header or data[len(MAGIC):len(MAGIC) + NONCE_BYTES] != nonce:
        return Tampered("a result frame with the wrong seal")
    (length,) = _LENGTH.unpack_from(data, len(MAGIC) + NONCE_BYTES)
    if len(data) > header + length:
        return Tampered(f"{len(data) - header - length} bytes after the result frame")
    if len(data) < header + length:
        return None  # cut short: the child died while sending; its exit status says how
    return data[header:]
