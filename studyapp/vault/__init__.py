"""The notes vault: loading markdown notes and writing review keys back byte for byte.

Public API: `Vault`, `Note`, `LoadProblem`, `VaultSnapshot`, `WriteConflict`, `NoteWriteError`.
"""

from studyapp.vault.model import (
    OWNED_KEYS,
    LoadProblem,
    Note,
    NoteWriteError,
    VaultSnapshot,
    WriteConflict,
)
from studyapp.vault.vault import Vault, content_hash

__all__ = [
    "OWNED_KEYS",
    "LoadProblem",
    "Note",
    "NoteWriteError",
    "Vault",
    "VaultSnapshot",
    "WriteConflict",
    "content_hash",
]
