"""Every drill, by id (the grader worker looks drills up here; it imports torch).

A folder drill's `grade.py` defines `DRILL`; the four drills not yet moved into folders are
listed by hand until they are.
"""

from __future__ import annotations

from importlib import import_module

from .catalog import drill_folders
from .grading import Drill
from .mask_drills import CausalMaskDrill, PaddingMaskDrill
from .mha_drill import MhaDrill
from .sdpa_drill import SdpaDrill


def _folder_drills() -> list[Drill]:
    return [import_module(f"{__package__}.{folder.name}.grade").DRILL for folder in drill_folders()]


DRILLS: dict[str, Drill] = {
    drill.id: drill for drill in (SdpaDrill(), CausalMaskDrill(), PaddingMaskDrill(), MhaDrill(), *_folder_drills())
}
