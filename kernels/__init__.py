"""Reference kernels and drill specs: plain PyTorch, no studyapp imports.

Loaded by `studyapp.kernels_loader.load_kernels()` as `studyapp_kernels`; modules inside this
folder import each other relatively. This file stays light (no torch): `catalog` describes the
drills without torch, and the torch-backed names below are imported on first access.
"""

from __future__ import annotations

from importlib import import_module

from .catalog import DrillInfo

_LAZY = {
    "CATALOG": ".catalog",  # parsed on first use: a caller with a memo of the parses never needs it
    "DRILLS": ".registry",
    "Drill": ".grading",
    "Case": ".grading",
    "export": ".grading",
    "grade_in_process": ".inprocess",
    "grade_in_process_seeds": ".inprocess",
}

__all__ = ["CATALOG", "DrillInfo", *_LAZY]


def __getattr__(name: str):
    """Import torch-backed names only when asked for (PEP 562)."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_LAZY[name], __name__), name)
    globals()[name] = value
    return value
