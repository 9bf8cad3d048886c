"""Every drill, by id (the grader worker looks drills up here; it imports torch).

Each drill folder's `grade.py` defines `DRILL` (see kernels/README.md); the order is the
catalog's, so lists read the same in the CLI, the TUI and the grader.
"""

from __future__ import annotations

from importlib import import_module

from .catalog import CATALOG
from .grading import Drill

DRILLS: dict[str, Drill] = {
    drill_id: import_module(f"{__package__}.{drill_id}.grade").DRILL for drill_id in CATALOG
}
