"""One odd note stops the app's review session: a note whose bytes past its first 4 KB are not
UTF-8 (a web clip with a Latin-1 tail, a binary paste).

README: "A load reads each note's head (its block and title), not its body: a byte past it that
is not UTF-8 shows when the note is shown or written (one line, nothing written)". So such a note
is in today's queue, and the review screen builds its card (`StudyFacade._card` reads
`note.body`, which raises UserError). Nothing catches that for the session:
- when it is the first note of the queue, the session's worker fails and the screen says "Could
  not start the session. Esc goes back.": none of the vault's other notes can be reviewed;
- when it comes after another note, rating that note (`ReviewScreen.action_rate` ->
  `current_card`) raises out of the key handler and the app ends as on a bug of studyapp
  (`_handle_exception`: exit 70, "a bug of studyapp", crash.log).
The CLI's `due` lists the note and `rate` of every other note works; only the app breaks.
"""

from __future__ import annotations

import asyncio

import pytest
from vault_fixtures import new_note

from studyapp.context import build_context
from studyapp.errors import UserError

FROZEN_NOW = "2026-11-22T09:00:00+08:00"



def _good(i: int) -> str:
    return new_note(f"Good question {i}", f"Good answer {i}.")


ODD_RAW = (new_note("A web clip with a Latin-1 tail", "Short answer.") + "\n"
           + "Clipped text. " * 400 + "\n").encode("utf-8") + "Café crème, naïve façade.\n".encode("latin-1")
assert len(ODD_RAW) > 4096 and b"\xe9" in ODD_RAW[4096:]


class _NoGrader:
    """No drill is graded here."""

    def close(self) -> None:
        pass

    def cancel(self) -> None:
        pass


def _app(tmp_path, monkeypatch, notes: dict[str, bytes]):
    from studyapp.facade import StudyFacade
    from studyapp.tui.app import StudyApp

    monkeypatch.setattr(StudyApp, "start_grader_early", False)
    vault = tmp_path / "vault"
    vault.mkdir()
    for name, raw in notes.items():
        (vault / name).write_bytes(raw)
    ctx = build_context(vault=str(vault), data_dir=str(tmp_path / "data"), now=FROZEN_NOW, seed=False)
    return StudyApp(ctx, study=StudyFacade(ctx, make_grader=lambda _ctx: _NoGrader())), vault


async def _settle(pilot) -> None:
    from tui.conftest import settle

    await settle(pilot)


def test_a_first_note_with_an_unreadable_tail_does_not_stop_the_session(tmp_path, monkeypatch):
    app, vault = _app(tmp_path, monkeypatch, {"a-clip.md": ODD_RAW, **{f"good{i}.md": _good(i).encode() for i in range(3)}})
    seen: dict[str, object] = {}

    async def scenario() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            await _settle(pilot)
            await pilot.press("r")
            await _settle(pilot)
            screen = app.screen
            seen["card"] = getattr(screen, "card", None)
            seen["question"] = str(screen.query_one("#question").render())
            seen["notices"] = [n.message for n in app._notifications]

    asyncio.run(scenario())
    card = seen["card"]
    assert card is not None and "Could not start" not in seen["question"], (
        f"the review screen says {seen['question']!r} (notices: {seen['notices']}): one note whose bytes past "
        "4 KB are not UTF-8 stops the session, and none of the 3 good notes can be reviewed")
    assert any("a-clip.md" in n and "left out of this session" in n for n in seen["notices"]), seen["notices"]
    assert (vault / "a-clip.md").read_bytes() == ODD_RAW


def test_rating_the_note_before_one_with_an_unreadable_tail_does_not_end_the_app(tmp_path, monkeypatch):
    app, vault = _app(tmp_path, monkeypatch, {"a-good.md": _good(1).encode(), "b-clip.md": ODD_RAW,
                                              "c-good.md": _good(2).encode()})
    seen: dict[str, object] = {}

    async def scenario() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            await _settle(pilot)
            await pilot.press("r")
            await _settle(pilot)
            seen["first"] = app.screen.card.path
            await pilot.press("space")
            await _settle(pilot)
            await pilot.press("3")
            await _settle(pilot)
            seen["next"] = getattr(app.screen, "card", None)

    try:
        asyncio.run(scenario())
    except UserError as exc:
        pytest.fail(f"rating {seen.get('first')} ended the app with {type(exc).__name__}: {exc} (the real app "
                    "exits 70 saying it is a bug of studyapp): the next note's unreadable tail is read to show it")
    assert seen["first"] == "a-good.md"
    assert "review_count: 1" in (vault / "a-good.md").read_text(encoding="utf-8")
    assert (vault / "b-clip.md").read_bytes() == ODD_RAW
