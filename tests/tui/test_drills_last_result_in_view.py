"""The Drills list's "Last result" column, as drawn at 80 and 100 columns: the drill titles took
every cell the status columns left, and the last result was off the screen (at 80 only its
header's first letter showed)."""

from __future__ import annotations

import pytest
from textual.widgets import TextArea

from .conftest import app_with_grader, screen_lines, settle
from .sample_vault import write_vault
from .test_tui_drills import StubGrader
from .test_tui_loop import NO_SCALING_VERDICT

FAILED = "fail: " + NO_SCALING_VERDICT["summary"]
"""sdpa's last result as the list words it: a long one, which has to be shortened."""
PASSED = "pass: all checks pass"
"""The other drill's: short enough to be shown whole."""


class SdpaFailsGrader(StubGrader):
    """sdpa gets the real grader's failing verdict, every other drill a pass."""

    def grade(self, drill_id, path, device="auto", timeout=None):
        if drill_id == "sdpa":
            self.graded.append((drill_id, open(path, encoding="utf-8").read()))
            return dict(NO_SCALING_VERDICT, drill=drill_id, file=str(path))
        return super().grade(drill_id, path, device, timeout)


async def run_once(pilot, drill_id: str) -> None:
    """Open the drill, write something of one's own (an untouched starter is not an attempt), run it, leave."""
    pilot.app.action_open_drill(drill_id)
    await settle(pilot)
    pilot.app.screen.query_one("#code", TextArea).text = "def mine():\n    return None\n"
    await pilot.press("ctrl+r")
    await settle(pilot)
    await pilot.press("escape")
    await settle(pilot)


@pytest.mark.parametrize("width", [80, 100])
async def test_the_last_result_is_readable_at_80_and_100_columns(ctx, width):
    write_vault(ctx.paths.vault_dir)
    app = app_with_grader(ctx, SdpaFailsGrader())
    async with app.run_test(size=(width, 24)) as pilot:
        await settle(pilot)
        await run_once(pilot, "sdpa")
        await run_once(pilot, "causal_mask")
        await pilot.press("d")
        await settle(pilot)
        lines = screen_lines(app)
        header = next(line for line in lines if "Next due" in line)
        assert "Last result" in header, header
        sdpa = next(line for line in lines if "Scaled dot" in line)
        causal = next(line for line in lines if "Causal mask" in line)
        assert PASSED in causal, causal  # short: whole, no ellipsis
        assert FAILED[:18] in sdpa and "…" in sdpa, sdpa  # long: its start, cut with an ellipsis
