"""Every drill, by id (the grader worker looks drills up here; it imports torch)."""

from __future__ import annotations

from .grading import Drill
from .mask_drills import CausalMaskDrill, PaddingMaskDrill
from .mha_drill import MhaDrill
from .sdpa_drill import SdpaDrill

DRILLS: dict[str, Drill] = {
    drill.id: drill for drill in (SdpaDrill(), CausalMaskDrill(), PaddingMaskDrill(), MhaDrill())
}
