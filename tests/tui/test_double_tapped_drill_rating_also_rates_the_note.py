"""A drill opened from a review (`p`, the note's answer showing) and given up proposes Again; the
learner rates it with `2`, pressing the key twice in quick succession (a tenth of a second apart,
as a key that did not seem to take is pressed again). The first `2` rates the drill and closes
it; the second lands on the review underneath, whose answer is still revealed, and rates the
note Hard: a review the learner never gave, of a note whose rating buttons they never saw
again. Found in tmux: the log held `drill_review … rating 2` and then `review … rating 2` for
the note, and the note's `review_count` went up."""

from __future__ import annotations

import os
import subprocess
import time
from functools import partial

from .sample_vault import write_vault
from .test_tui_tmux import NOTE, app_command, pane_text, pytestmark, tmux, wait_in  # noqa: F401 - the module's marks (serial, tmux)

SESSION = f"tui-studyapp-double-tap-{os.getpid()}"


screen = partial(pane_text, SESSION)
wait_for = partial(wait_in, SESSION)


def key(name: str) -> None:
    tmux("send-keys", "-t", SESSION, name)


def test_a_rating_key_pressed_twice_on_the_drill_does_not_rate_the_note(tmp_path):
    vault = write_vault(tmp_path / "vault", broken=False)
    (vault / ".studyapp" / "log").mkdir(parents=True)  # a returning learner: no first-run toast
    before = (vault / NOTE).read_text(encoding="utf-8")
    assert "review_count: 3" in before
    command = "unset COLUMNS LINES; " + app_command(tmp_path, vault)
    tmux("new-session", "-d", "-s", SESSION, "-x", "120", "-y", "36", command)
    try:
        wait_for("waiting — press r")
        key("r")
        wait_for("为什么注意力分数要除以根号")
        key("Space")
        wait_for("3 Good")
        time.sleep(0.5)
        key("p")  # the note's drill
        wait_for("Run grader")
        time.sleep(1.0)
        key("F3")
        wait_for("Give up, show the reference")
        key("y")
        wait_for("Proposed rating: Again")
        time.sleep(1.0)
        key("2")  # Hard, for the drill ...
        time.sleep(0.1)
        key("2")  # ... pressed again
        wait_for("Hard: next in")
        time.sleep(2.0)
        shown = screen()
    finally:
        subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    after = (vault / NOTE).read_text(encoding="utf-8")
    assert "review_count: 3" in after and "last_reviewed: '2026-11-10'" in after, (
        f"the second key rated the note under the drill:\n{after}\n\nscreen:\n{shown}")
