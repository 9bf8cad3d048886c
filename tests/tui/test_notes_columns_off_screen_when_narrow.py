"""Found in tmux: the Notes screen in a terminal 60 columns wide (a half-screen split) lists
each note's next review, mastery, reviews and a title cut to ten cells, but no Path column: it is
off the right edge of the table. At 50 columns the Title column goes too, and the learner sees
rows of dates and percentages with no way to tell which note is which (at 40 columns only "Next
review" and "Mastery" are left). The folder tree keeps its 17 cells all the while.

README (Notes): "a Path column tells notes with one title apart (at any width every column stays
in view: a long title is cut at its end, a long path in its middle, keeping its start and its
end; below 100 columns the tree narrows)"."""

from __future__ import annotations

import pytest

from studyapp.tui.app import StudyApp

from .conftest import screen_lines, settle
from .sample_vault import write_vault


@pytest.mark.parametrize("width", [60, 50])
async def test_every_column_of_notes_stays_in_view_in_a_narrow_terminal(ctx, width):
    write_vault(ctx.paths.vault_dir, broken=False)
    app = StudyApp(ctx)
    async with app.run_test(size=(width, 20)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        lines = screen_lines(app)
        header = next((line for line in lines if "Next review" in line), "")
        assert "Title" in header and "Path" in header, (
            f"at {width} columns the Notes table's header reads {header.strip()!r}:\n" + "\n".join(lines))
