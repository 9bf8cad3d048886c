"""Found in tmux: in the day's session, past the notes, two drills are due. The learner opens the
first (Enter), gives up (F3, y), and accepts the proposed rating with Enter, pressing it twice in
quick succession (a key that did not seem to take is pressed again). The first Enter records the
drill's rating and closes it; the second lands on the review underneath, which now offers the
next due drill, and opens it: a try of a drill the learner never chose to start, its clock
running from that moment (the try's time becomes the review's duration, and decides Easy), and
a `drill_start` in the review log. The same double tap of `1`-`4` is guarded
(`review.REPEAT_GUARD`, test_double_tapped_drill_rating_also_rates_the_note.py); Enter is not."""

from __future__ import annotations

import json
import os
import subprocess
import time
from functools import partial

from .test_tui_tmux import app_command, pane_text, pytestmark, tmux, wait_in  # noqa: F401 - the module's marks (serial, tmux)

SESSION = f"tui-studyapp-double-enter-{os.getpid()}"

NOTE = """---
created: '2026-11-01'
last_reviewed: '2026-11-12'
next_review: '2026-11-20'
review_count: 3
difficulty: medium
mastery_level: 0.3
drills: [causal_mask, padding_mask]
tags: [attention]
---
# Which masks does attention need?

## Answer
A causal mask for decoders, a padding mask for batches of unequal lengths.
"""

screen = partial(pane_text, SESSION)
wait_for = partial(wait_in, SESSION)


def key(name: str) -> None:
    tmux("send-keys", "-t", SESSION, name)


def logged(vault) -> list[tuple[str, str | None]]:
    events = []
    for log in (vault / ".studyapp" / "log").glob("*.jsonl"):
        for line in log.read_text(encoding="utf-8").splitlines():
            event = json.loads(line)
            events.append((event["kind"], event.get("drill")))
    return events


def test_enter_pressed_twice_to_accept_a_drill_rating_does_not_open_the_next_drill(tmp_path):
    vault = tmp_path / "vault"
    (vault / ".studyapp" / "log").mkdir(parents=True)  # a returning learner: no first-run toast
    (vault / "masks.md").write_text(NOTE, encoding="utf-8")
    command = "unset COLUMNS LINES; " + app_command(tmp_path, vault)
    tmux("new-session", "-d", "-s", SESSION, "-x", "120", "-y", "36", command)
    try:
        wait_for("waiting — press r")
        key("r")
        wait_for("Which masks does attention need")
        key("Space")
        wait_for("3 Good")
        key("3")
        wait_for("New drill:")
        time.sleep(0.5)
        key("Enter")  # the first drill
        wait_for("Run grader")
        time.sleep(1.0)
        key("F3")
        wait_for("Give up, show the reference")
        key("y")
        wait_for("Proposed rating: Again")
        time.sleep(1.0)
        key("Enter")  # records Again ...
        time.sleep(0.1)
        key("Enter")  # ... pressed again
        wait_for("Again: next in")
        time.sleep(2.0)
        shown = screen()
    finally:
        subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    starts = [drill for kind, drill in logged(vault) if kind == "drill_start"]
    assert len(starts) == 1 and "Run grader" not in shown, (
        f"the second Enter opened the next drill and started its try (drill_start: {starts}):\n{shown}")
