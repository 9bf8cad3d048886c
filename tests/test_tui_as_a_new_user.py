"""A new user driving the app as the README tells: keys that do not do what the README, the
footer or the screen says, and a Today panel that contradicts `studyapp due`."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from studyapp.cli import main
from studyapp.context import build_context

ROOT = Path(__file__).resolve().parent.parent
NOW = "2026-11-22T09:00:00+08:00"

NOTE = """---
created: '2026-10-01'
last_reviewed: '2026-11-12'
next_review: '2026-11-22'
review_count: 3
difficulty: medium
mastery_level: 0.4
drills: [sdpa]
tags: [attention]
---
# Why scale attention scores by sqrt(d_k)

## 面试标准答案
The dot products grow with d_k; scaling keeps the softmax out of saturation.
"""

PLAIN = """---
created: '2026-10-01'
last_reviewed: null
next_review: '{due}'
review_count: 0
drills: []
---
# {title}

## 面试标准答案
An answer.
"""


class StubGrader:
    def grade(self, drill_id, path, device="auto", timeout=None):
        return {"status": "pass", "summary": "all checks pass", "hint": "",
                "checks": [{"name": "shape", "tier": "core", "status": "pass", "message": ""}], "seconds": 0.1}

    def cancel(self):
        pass

    def close(self):
        pass


@pytest.fixture(autouse=True)
def _no_early_grader(monkeypatch):
    from studyapp.tui.app import StudyApp

    monkeypatch.setattr(StudyApp, "start_grader_early", False)


def make_app(tmp_path: Path, now: str = NOW):
    from studyapp.facade import StudyFacade
    from studyapp.tui.app import StudyApp

    ctx = build_context(vault=str(tmp_path / "vault"), data_dir=str(tmp_path / "data"), now=now, seed=False)
    return StudyApp(ctx, study=StudyFacade(ctx, make_grader=lambda _ctx: StubGrader()))


async def settle(pilot) -> None:
    app = pilot.app
    for _ in range(50):
        await pilot.pause()
        if any(not w.is_finished for w in app.workers):
            await app.workers.wait_for_complete()
            continue
        return


def footer_keys(app) -> set[str]:
    return {key.key for key in app.screen.query("FooterKey")}


def test_space_then_3_on_a_due_drill_card_does_not_type_into_the_drill(tmp_path):
    """In a session, space shows the answer and 3 rates Good. After the last note the session
    offers the drill ("Enter opens it", footer "⏎ Open drill"; README: "Enter in the session").
    Space opens it too (a hidden binding) with the editor focused, so the reflex "space, 3"
    types "3" into the starter, and leaving the drill saves that."""
    from textual.widgets import TextArea

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "scale.md").write_text(NOTE, encoding="utf-8")
    app = make_app(tmp_path)

    async def drive():
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            await pilot.press("r")
            await settle(pilot)
            await pilot.press("space")
            await settle(pilot)
            await pilot.press("3")  # the note: Good
            await settle(pilot)
            await pilot.press("space")  # the next card is the drill: "Enter opens it"
            await settle(pilot)
            await pilot.press("3")
            await settle(pilot)
            editors = list(app.screen.query(TextArea))
            return editors[0].text if editors else None

    code = asyncio.run(drive())
    starter = (ROOT / "kernels" / "sdpa" / "starter.py").read_text(encoding="utf-8")
    assert code is None or code == starter, "space opened the drill and '3' went into the code"


def test_keys_hidden_from_the_footer_are_in_the_palette_as_the_readme_says(tmp_path):
    """README said "Every action has a key shown in the footer", but the Review screen's `s`
    (suspend) and `p` (practise) and the Notes screen's `u` are kept out of it (it holds what
    fits in 80 columns). The README now says the footer shows the main keys and the palette
    every action of the screen in view: the palette runs a hidden one by its name."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "scale.md").write_text(NOTE, encoding="utf-8")
    app = make_app(tmp_path)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "Every action has a\nkey shown in the footer" not in readme

    async def drive():
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            await pilot.press("r")
            await settle(pilot)
            await pilot.press("ctrl+p")
            await settle(pilot)
            await pilot.press(*"suspend")  # the review screen's hidden `s`, found by its name
            await settle(pilot)
            await pilot.press("enter")
            await settle(pilot)
            return app.study.service.store.card(app.study.service.store.note_by_path("scale.md").key)

    card = asyncio.run(drive())
    assert card is not None and card.suspended


@pytest.mark.slow
def test_todays_drills_on_today_lists_the_drill_that_is_due(tmp_path, capsys):
    """Weeks after passing sdpa and rating it, `studyapp due` says "Drills due after the notes:
    sdpa", but Today's "Today's drills" panel (the queue's first notes pair with no drill)
    lists every drill not yet passed instead (here 11 "not started" drills, most paired with no
    note at all and none due) and leaves out sdpa, the one that is due."""
    from studyapp.facade import StudyFacade

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "scale.md").write_text(NOTE, encoding="utf-8")
    (vault / "later.md").write_text(PLAIN.format(due="2027-01-10", title="Later"), encoding="utf-8")
    day0 = ["--vault", str(vault), "--data-dir", str(tmp_path / "data"), "--now", "2026-11-22T09:00"]
    assert main(["rate", "scale.md", "--rating", "easy", *day0]) == 0
    assert main(["start", "sdpa", *day0]) == 0
    reference = ROOT / "kernels" / "sdpa" / "reference.py"
    assert main(["grade", "sdpa", str(reference), "--device", "cpu", *day0]) == 0
    assert main(["rate-drill", "sdpa", "--rating", "again", *day0]) == 0  # due again the next day
    assert main(["suspend", "scale.md", *day0]) == 0
    later = ["--vault", str(vault), "--data-dir", str(tmp_path / "data"), "--now", "2027-01-10T09:00"]
    capsys.readouterr()
    assert main(["due", *later]) == 0
    assert "sdpa" in capsys.readouterr().out.split("Drills due after the notes:")[-1]

    ctx = build_context(vault=str(vault), data_dir=str(tmp_path / "data"), now="2027-01-10T09:00", seed=False)
    study = StudyFacade(ctx)
    study.load()
    try:
        shown = [d.id for d in study.today().drills]
    finally:
        study.close()
    assert "sdpa" in shown, shown
    assert "safe_softmax" not in shown, shown  # paired with no note, not due
