"""$EDITOR that cannot run, or cannot even be parsed, and a review started and answered faster
than its session is built: each leaves the app usable and the learner told (tester's repros
editor_missing.sh, editor_badquote.sh, fast_review_opens_drill.sh)."""

from __future__ import annotations

import threading

import pytest
from textual.drivers.headless_driver import HeadlessDriver
from textual.widgets import Static, TextArea

from studyapp.tui import editor
from studyapp.tui.app import StudyApp
from studyapp.tui.screens.drill import DrillScreen
from studyapp.tui.screens.review import ReviewScreen

from .conftest import app_with_grader, notified, settle
from .sample_vault import write_vault
from .test_tui_drills import StubGrader


@pytest.fixture
def terminal(monkeypatch):
    """Textual's own `App.suspend` over a headless driver that says it can suspend, recording
    each suspend and resume: the app is left suspended (blank, deaf) when they do not pair up."""
    calls: list[str] = []
    monkeypatch.setattr(HeadlessDriver, "can_suspend", property(lambda self: True))
    monkeypatch.setattr(HeadlessDriver, "suspend_application_mode", lambda self: calls.append("suspend"))
    monkeypatch.setattr(HeadlessDriver, "resume_application_mode", lambda self: calls.append("resume"))
    return calls


@pytest.fixture
def app(ctx, monkeypatch):
    monkeypatch.delenv("VISUAL", raising=False)
    write_vault(ctx.paths.vault_dir)
    return StudyApp(ctx)


def not_a_program(tmp_path):
    """An executable file the OS refuses to run (no #! line): found on PATH, fails at exec."""
    path = tmp_path / "not-an-editor"
    path.write_bytes(b"\x7fELF\x00garbage")
    path.chmod(0o755)
    return path


async def edit_in_review(pilot) -> ReviewScreen:
    await settle(pilot)
    await pilot.press("r")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, ReviewScreen) and screen.card is not None
    await pilot.press("e")
    await settle(pilot)
    return screen


async def still_answers_keys(pilot, screen: ReviewScreen) -> None:
    assert pilot.app.screen is screen and not screen.revealed
    await pilot.press("space")
    await settle(pilot)
    assert screen.revealed


@pytest.mark.parametrize("kind", ["missing", "directory", "exec fails"])
async def test_an_editor_that_cannot_run_leaves_the_app_resumed_and_says_so(app, terminal, monkeypatch,
                                                                            tmp_path, kind):
    command = {"missing": "/nonexistent/ed", "directory": str(tmp_path),
               "exec fails": str(not_a_program(tmp_path))}[kind]
    monkeypatch.setenv("EDITOR", command)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await edit_in_review(pilot)
        assert terminal.count("suspend") == terminal.count("resume")
        assert notified(app, command)
        assert any(n.title == "Could not open the editor" for n in app._notifications)
        await still_answers_keys(pilot, screen)


async def test_a_missing_editor_is_found_missing_before_the_app_is_suspended(app, terminal, monkeypatch):
    monkeypatch.setenv("EDITOR", "/nonexistent/ed --wait")
    async with app.run_test(size=(100, 30)) as pilot:
        await edit_in_review(pilot)
        assert terminal == []
        assert notified(app, "/nonexistent/ed")


async def test_an_interrupted_editor_resumes_the_app(app, terminal, monkeypatch):
    """ctrl+c while a non-raw editor (`code --wait`) runs reaches the app too."""
    monkeypatch.setenv("EDITOR", "sh")

    def interrupted(command, path):
        raise KeyboardInterrupt

    monkeypatch.setattr(editor, "launch_editor", interrupted)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await edit_in_review(pilot)
        assert terminal == ["suspend", "resume"]
        assert any(n.title == "Could not open the editor" for n in app._notifications)
        await still_answers_keys(pilot, screen)


@pytest.mark.parametrize("variable", ["EDITOR", "VISUAL"])
async def test_an_unparsable_editor_setting_is_named_not_a_crash(app, terminal, monkeypatch, variable):
    monkeypatch.setenv(variable, "vim '")
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await edit_in_review(pilot)
        assert terminal == []
        assert any(f"${variable}" in n.message and "vim '" in n.message for n in app._notifications)
        await still_answers_keys(pilot, screen)


async def test_f4_in_a_drill_with_a_missing_editor_keeps_the_drill_usable(ctx, terminal, monkeypatch):
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", "/nonexistent/ed")
    write_vault(ctx.paths.vault_dir)
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.action_open_drill("sdpa")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, DrillScreen)
        await pilot.press("f4")
        await settle(pilot)
        assert terminal.count("suspend") == terminal.count("resume")
        assert notified(app, "/nonexistent/ed")
        code = screen.query_one("#code", TextArea)
        before = code.text
        await pilot.press("x")
        await settle(pilot)
        assert app.screen is screen and code.text != before


def gate_next_session(app, monkeypatch) -> threading.Event:
    """Hold the next `begin_review` (in its worker) until the returned event is set."""
    gate = threading.Event()
    begin = app.study.begin_review

    def slow_begin():
        gate.wait(10)
        begin()

    monkeypatch.setattr(app.study, "begin_review", slow_begin)
    return gate


@pytest.mark.parametrize("key", ["space", "enter"])
async def test_a_key_before_the_session_is_built_opens_no_drill(app, monkeypatch, key):
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        first = app.screen.card.path
        await pilot.press("space", "3", "escape")  # a short session, then back to Today
        await settle(pilot)
        gate = gate_next_session(app, monkeypatch)
        await pilot.press("r", key)
        screen = app.screen
        assert isinstance(screen, ReviewScreen), type(screen).__name__
        assert screen.due_drill is None
        assert "drill" not in str(screen.query_one("#question", Static).render()).lower()
        gate.set()
        await settle(pilot)
        assert app.screen is screen
        assert screen.card is not None and screen.card.path != first  # rated: not due again today
        assert screen.card.path == app.study.current_card().path and not screen.revealed
        assert not any(isinstance(s, DrillScreen) for s in app.screen_stack)
        await pilot.press("space")
        assert screen.revealed



async def test_a_session_that_cannot_be_built_says_so_and_esc_goes_back(app, monkeypatch):
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)

        def broken():
            raise OSError("disk gone")

        monkeypatch.setattr(app.study, "begin_review", broken)
        await pilot.press("r")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        assert notified(app, "disk gone")
        assert "Could not start" in str(screen.query_one("#question", Static).render())
        await pilot.press("space")
        await settle(pilot)
        assert app.screen is screen and screen.due_drill is None
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, ReviewScreen)
