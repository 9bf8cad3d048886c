"""Drills: open one, edit, grade with a stub grader and with the real worker; re-runs cancel."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from grader_helpers import Lent
from textual.widgets import DataTable, Static, TextArea

from studyapp.tui.app import StudyApp
from studyapp.tui.screens.drill import DrillScreen

from .conftest import app_with_grader, real_app, settle
from .sample_vault import write_vault


class StubGrader:
    """Answers like GraderClient; `block` makes a grade wait until cancelled."""

    def __init__(self, block: bool = False) -> None:
        self.block = block
        self.graded: list[tuple[str, str]] = []
        self.cancelled = threading.Event()

    def grade(self, drill_id, path, device="auto", timeout=None):
        self.graded.append((drill_id, open(path, encoding="utf-8").read()))
        if self.block and len(self.graded) == 1:
            self.cancelled.wait(10)
            return {"status": "error", "summary": "cancelled", "hint": "", "checks": [], "seconds": 0.0}
        return {"status": "pass", "summary": "all checks pass", "hint": "",
                "checks": [{"name": "shape", "tier": "core", "status": "pass", "message": ""}], "seconds": 0.2}

    def cancel(self):
        self.cancelled.set()

    def close(self):
        pass


async def open_sdpa(pilot) -> DrillScreen:
    await settle(pilot)
    await pilot.press("d")
    await settle(pilot)
    table = pilot.app.screen.query_one("#drill-table", DataTable)
    assert table.row_count >= 4
    pilot.app.action_open_drill("sdpa")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, DrillScreen)
    return screen


@pytest.fixture
def app(ctx, shared_grader):
    """The real app with the real grader (shared: see `shared_grader`)."""
    write_vault(ctx.paths.vault_dir)
    return real_app(ctx, shared_grader)


def drills_app(ctx, grader) -> StudyApp:
    write_vault(ctx.paths.vault_dir)
    return app_with_grader(ctx, grader)


async def test_open_drill_copies_the_starter_once(app, ctx):
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_sdpa(pilot)
        workspace = ctx.paths.workspace_dir / "sdpa.py"
        assert screen.query_one("#code", TextArea).text == workspace.read_text(encoding="utf-8")
        workspace.write_text("# mine\n", encoding="utf-8")
        await pilot.press("escape")
        app.action_open_drill("sdpa")
        await settle(pilot)
        assert app.screen.query_one("#code", TextArea).text == "# mine\n"


async def test_run_with_stub_grader_saves_grades_and_records_the_attempt(ctx):
    stub = StubGrader()
    app = drills_app(ctx, stub)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_sdpa(pilot)
        screen.query_one("#code", TextArea).text = "def scaled_dot_product_attention(Q, K, V, mask=None):\n    return V\n"
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert stub.graded == [("sdpa", "def scaled_dot_product_attention(Q, K, V, mask=None):\n    return V\n")]
        assert "PASS" in str(screen.query_one("#grade-status", Static).render())
        assert screen.query_one("#checks", DataTable).row_count == 1
        await pilot.press("escape")
        await settle(pilot)
        assert app.study.drills()[0].status == "passed"
        # the note that lists the drill gets its mastery recomputed with the pass counted
        note = (ctx.paths.vault_dir / "注意力/缩放因子.md").read_text(encoding="utf-8")
        assert "mastery_level: 0.3\n" not in note
        assert "review_count: 3" in note


class HashingGrader(StubGrader):
    """A stub that sends, as the worker does, the hash of the bytes it graded."""

    def grade(self, drill_id, path, device="auto", timeout=None):
        import hashlib

        verdict = super().grade(drill_id, path, device, timeout)
        return dict(verdict, origin=None, device="cpu",
                    source_sha256=hashlib.sha256(Path(path).read_bytes()).hexdigest())


async def test_a_run_a_watch_beside_the_app_recorded_is_shown_but_not_counted_again(ctx):
    """`studyapp watch` in a terminal and the app's drill screen grade the same save; the app
    gets the rule from the recording function the CLI calls. Before: two attempts."""
    from studyapp.drills import record_attempt_alone

    stub = HashingGrader()
    app = drills_app(ctx, stub)
    code = "def scaled_dot_product_attention(Q, K, V, mask=None):\n    return V\n"
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_sdpa(pilot)
        screen.query_one("#code", TextArea).text = code
        screen.action_save()
        workspace = ctx.paths.workspace_dir / "sdpa.py"
        watched = dict(stub.grade("sdpa", workspace), drill="sdpa", file=str(workspace))
        assert record_attempt_alone(ctx, watched).counted  # the watch's grade of that save
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert "not counted again" in str(screen.query_one("#verdict-summary", Static).render())
        assert len(app.study.service.store.drill_attempts("sdpa")) == 1
        screen.query_one("#code", TextArea).text = code + "# changed\n"
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert "not counted again" not in str(screen.query_one("#verdict-summary", Static).render())
        assert len(app.study.service.store.drill_attempts("sdpa")) == 2


async def test_cancelled_run_is_not_recorded(ctx):
    stub = StubGrader(block=True)
    app = drills_app(ctx, stub)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_sdpa(pilot)
        await pilot.press("ctrl+r")
        await pilot.pause()
        await pilot.press("ctrl+r")
        await settle(pilot)
        verdicts = [row.verdict for row in app.study.service.store.drill_attempts("sdpa")]
        assert verdicts == ["pass"]


async def test_second_run_cancels_the_first(ctx):
    stub = StubGrader(block=True)
    app = drills_app(ctx, stub)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_sdpa(pilot)
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert screen.grading and screen.query_one("#grading-spinner").display
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert stub.cancelled.is_set()
        assert len(stub.graded) == 2
        assert "PASS" in str(screen.query_one("#grade-status", Static).render())


async def test_saving_from_outside_regrades(ctx):
    stub = StubGrader()
    app = drills_app(ctx, stub)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_sdpa(pilot)
        time.sleep(0.01)
        screen.path.write_text("# edited elsewhere\n", encoding="utf-8")
        screen._poll_file()  # the 1 s timer's job, called directly instead of sleeping
        await settle(pilot)
        assert screen.query_one("#code", TextArea).text == "# edited elsewhere\n"
        assert stub.graded == [("sdpa", "# edited elsewhere\n")]


@pytest.mark.slow
async def test_real_grader_rejects_the_starter(ctx, warm_grader):
    """A real worker, already warm (the app building and starting its own is tested in
    test_tui_startup and, end to end, in the next test)."""
    app = drills_app(ctx, Lent(warm_grader))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_sdpa(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
        deadline = time.monotonic() + 120
        while screen.grading and time.monotonic() < deadline:
            await pilot.pause(0.1)
            await app.workers.wait_for_complete()
        status = str(screen.query_one("#verdict-summary", Static).render())
        assert "ERROR" in status and "NotImplementedError" in status
        # the starter as written holds nothing of the learner's: not a failed run of theirs
        assert app.study.drills()[0].status == "not started"
        screen.query_one("#code", TextArea).text = "def sdpa(q, k, v, mask=None):\n    return q\n"
        await pilot.press("ctrl+r")
        await settle(pilot)
        deadline = time.monotonic() + 120
        while screen.grading and time.monotonic() < deadline:
            await pilot.pause(0.1)
            await app.workers.wait_for_complete()
        assert app.study.drills()[0].status == "failing"


@pytest.mark.slow
def test_app_process_never_imports_torch_or_domain_textual():
    """In a fresh interpreter: the domain alone (everything the CLI imports) pulls in neither
    Textual nor torch, and the app has not imported torch after start-up nor after a real grade."""
    code = r"""
import sys, asyncio, tempfile, pathlib
import studyapp.cli, studyapp.facade, studyapp.views, studyapp.vault, studyapp.reviews, studyapp.stats
import studyapp.grader.client, studyapp.pairing
assert "textual" not in sys.modules, "domain imported textual"
assert "torch" not in sys.modules, "domain imported torch"
from studyapp.context import build_context
from studyapp.tui.app import StudyApp
root = pathlib.Path(tempfile.mkdtemp())
(root / "vault").mkdir()
(root / "vault" / "a.md").write_text("# A\n\n## Answer\nyes\n", encoding="utf-8")
ctx = build_context(vault=str(root / "vault"), data_dir=str(root / "data"), seed=False)
async def main():
    app = StudyApp(ctx)
    async with app.run_test() as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.press("d")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.press("S")
        await pilot.pause()
        await app.workers.wait_for_complete()
        assert app.study_ready
        assert "torch" not in sys.modules, "the app imported torch at start-up"
        app.action_open_drill("sdpa")
        await pilot.pause()
        await pilot.press("ctrl+r")
        for _ in range(600):
            await pilot.pause(0.1)
            await app.workers.wait_for_complete()
            if not app.screen.grading:
                break
        status = str(app.screen.query_one("#verdict-summary").render())
        assert "NotImplementedError" in status, status
asyncio.run(main())
assert "torch" not in sys.modules, "the app imported torch after a grade"
print("ok")
"""
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(repo), os.environ.get("PYTHONPATH")]))}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "ok"


async def test_a_grader_crash_is_a_notification(ctx):
    stub = StubGrader()
    stub.grade = lambda *a, **k: {"status": "error", "origin": "grader", "summary": "the grader stopped unexpectedly",
                                  "detail": "worker log: Killed", "hint": "", "checks": [], "seconds": 1.0}
    app = drills_app(ctx, stub)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_sdpa(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert "ERROR" in str(screen.query_one("#grade-status", Static).render())
        assert "worker log: Killed" in str(screen.query_one("#detail", Static).render())
        assert any(n.severity == "error" and "stopped unexpectedly" in n.message for n in app._notifications)


async def test_only_the_graders_own_failures_are_notified_whatever_the_words(ctx):
    """The screen reads the verdict's origin, never its summary: learner code whose error reads
    like ours is the learner's, shown in the results and not raised as a grader failure."""
    stub = StubGrader()
    stub.grade = lambda *a, **k: {"status": "error", "origin": "learner",
                                  "summary": "internal grader error", "detail": "raised by their code",
                                  "hint": "", "checks": [], "seconds": 1.0}
    app = drills_app(ctx, stub)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_sdpa(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert "raised by their code" in str(screen.query_one("#detail", Static).render())
        assert not any(n.title == "Grader" for n in app._notifications)


class WarmingGrader(StubGrader):
    """A stub that also takes the warm-up the app asks for when a drill opens."""

    def __init__(self) -> None:
        super().__init__()
        self.warmed: list[tuple[str, str]] = []

    def warm(self, drill_id, path):
        self.warmed.append((drill_id, str(path)))


async def test_opening_a_drill_warms_the_grader_on_its_reference_without_recording_it(ctx):
    """Issue 17: the worker's first grade of a drill builds its cases and reference values
    (seconds); the app has it grade the drill's own reference while the learner reads the
    statement, so their first run waits no longer than later ones. Nothing is recorded."""
    from studyapp.paths import kernels_dir

    grader = WarmingGrader()
    app = drills_app(ctx, grader)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_sdpa(pilot)
        await settle(pilot)
        assert grader.warmed == [("sdpa", str(kernels_dir() / "sdpa" / "reference.py"))]
        assert grader.graded == [] and app.study.service.store.drill_attempts("sdpa") == []
        await pilot.press("escape")
        await settle(pilot)
        app.action_open_drill("sdpa")
        await settle(pilot)
        assert len(grader.warmed) == 1, "a drill is warmed once per run"


def assert_status_columns_in_view(app, width: int) -> None:
    table = app.screen.query_one("#drill-table", DataTable)
    shown = table.scrollable_content_region.width
    widths = [column.get_render_width(table) for column in table.ordered_columns]
    assert sum(widths[:4]) <= shown, (widths, shown)  # Drill, Status, Next due, Passes
    titles = [str(table.get_row_at(row)[0]) for row in range(table.row_count)]
    full = [drill.title for drill in app.study.drills()]
    assert all(title == whole or (title.endswith("…") and whole.startswith(title[:-1]))
               for title, whole in zip(titles, full))
    assert width < 120 or titles == full  # shortened only when the screen is narrow


@pytest.mark.parametrize("width, height", [(80, 24), (120, 24), (80, 10)])
async def test_the_drill_list_shows_status_next_due_and_passes_at_any_width(ctx, width, height):
    """At 80 columns a long title used to push "Next due" and "Passes" off the screen: titles
    are shortened to what is left, so every row's status, due date and passes are in view,
    also after the terminal is resized, and on a terminal too short for every row (where the
    list's scroll bar takes its share of the width)."""
    write_vault(ctx.paths.vault_dir)
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(width, height)) as pilot:
        await settle(pilot)
        await pilot.press("d")
        await settle(pilot)
        assert_status_columns_in_view(app, width)
        other = 200 - width
        await pilot.resize_terminal(other, height)
        await settle(pilot)
        assert_status_columns_in_view(app, other)


MARKUP_LIKE = """import math

import torch

print("debug: scores[/b  and [link=x]x[/link] [@click=app.quit]quit[/]")


def scaled_dot_product_attention(Q, K, V, mask=None):
    raise ValueError("index out of range [/ n")
"""
"""Learner code whose printed output and error message look like Textual markup, broken and
whole: an unclosed `[/b` survived textual's `escape` and ended the app with a MarkupError,
on the run and again on every later opening of the drill (its last verdict is shown)."""


@pytest.mark.slow
async def test_learner_text_that_looks_like_markup_is_shown_as_text(ctx, warm_grader):
    app = drills_app(ctx, Lent(warm_grader))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_sdpa(pilot)
        screen.query_one("#code", TextArea).text = MARKUP_LIKE
        await pilot.press("ctrl+r")
        deadline = time.monotonic() + 120
        await settle(pilot)
        while screen.grading and time.monotonic() < deadline:
            await pilot.pause(0.1)
            await app.workers.wait_for_complete()
        await settle(pilot)
        summary = str(screen.query_one("#verdict-summary", Static).render())
        detail = str(screen.query_one("#detail", Static).render())
        assert "index out of range [/ n" in summary + detail
        assert "debug: scores[/b  and [link=x]x[/link] [@click=app.quit]quit[/]" in detail
        await pilot.press("escape")
        await settle(pilot)
        app.action_open_drill("sdpa")  # the stored verdict is drawn again
        await settle(pilot)
        assert "index out of range [/ n" in str(app.screen.query_one("#verdict-summary", Static).render())
    assert app.return_code in (None, 0)


async def test_titles_and_messages_that_look_like_markup_are_notified_as_text(ctx):
    """A notification carries note titles, paths and error messages: Textual reads a
    notification as markup, so a title with `[/b` ended the app when it was suspended."""
    vault = ctx.paths.vault_dir
    (vault / "odd.md").write_text("# Softmax [/b over [b]rows[/b]\n\n## Answer\nexp / sum\n", encoding="utf-8")
    app = app_with_grader(ctx, StubGrader())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        await pilot.press("s")  # suspend: "Suspended “<title>” ..."
        await settle(pilot)
        assert any("Softmax [/b over [b]rows[/b]" in n.message for n in app._notifications)
    assert app.return_code in (None, 0)


async def test_escape_sequences_in_learner_output_are_shown_not_obeyed(ctx):
    """Printed `\\x1b[2J` cleared the screen whenever the results were in view, `\\x1b[31m`
    recoloured them: a control character is drawn as its symbol."""
    stub = StubGrader()
    stub.grade = lambda *a, **k: {
        "status": "error", "origin": "learner", "summary": "raised ValueError: \x1b]0;owned\x07 bad",
        "hint": "\x1b[8mhidden", "output": "\x1b[2J\x1b[31mdebug: building mask\r",
        "checks": [{"name": "values", "tier": "core", "status": "fail", "message": "\x1b[1mbold"}],
        "seconds": 1.0}
    app = drills_app(ctx, stub)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_sdpa(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
        shown = [str(screen.query_one(selector, Static).render())
                 for selector in ("#verdict-summary", "#hint", "#detail")]
        table = screen.query_one("#checks", DataTable)
        shown += [str(cell) for cell in table.get_row_at(0)]
        assert not any(ch in text for text in shown for ch in "\x1b\x07\r"), shown
        assert "␛[2J␛[31mdebug: building mask" in shown[2] and "␛]0;owned␇ bad" in shown[0]


def test_plain_keeps_a_trailing_backslash_from_escaping_the_next_tag():
    """`[b]notes\\[/b]` read as an escaped `[/b]`: the bold ran on and the tag showed as text."""
    from textual.markup import to_content

    from studyapp.tui.markup import plain

    for text in ("notes\\", "a\\\\", "[/b\\", "\\"):
        shown = to_content(f"[b]{plain(text)}[/b] tail").plain.replace("\u200b", "")
        assert shown == f"{text} tail", (text, shown)


async def test_escape_sequences_reach_no_notification_or_list(ctx):
    """A learner's summary is also the Drills list's "Last result" and a grader failure's
    notification: raw ESC there was obeyed by the terminal. (A grader failure is no run of the
    learner's, so the list's result is a learner's failure, graded after it.)"""
    stub = StubGrader()
    stub.grade = lambda *a, **k: {"status": "error", "origin": "grader",
                                  "summary": "raised Weird\x1b[2J", "detail": "log: \x1b[31mred",
                                  "hint": "", "checks": [], "seconds": 1.0}
    app = drills_app(ctx, stub)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await open_sdpa(pilot)
        screen.query_one("#code", TextArea).text = "def sdpa(q, k, v):\n    return q\n"
        await pilot.press("ctrl+r")
        await settle(pilot)
        messages = [n.message for n in app._notifications]
        assert messages and not any("\x1b" in m for m in messages), messages
        stub.grade = lambda *a, **k: {"status": "fail", "origin": "learner",
                                      "summary": "raised Weird\x1b[2J", "detail": "",
                                      "hint": "", "checks": [], "seconds": 1.0}
        await pilot.press("ctrl+r")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("d")
        await settle(pilot)
        table = app.screen.query_one("#drill-table", DataTable)
        cells = [str(cell) for row in range(table.row_count) for cell in table.get_row_at(row)]
        assert any("␛[2J" in cell for cell in cells) and not any("\x1b" in cell for cell in cells)
    assert screen is not None


def _attempts(ctx) -> list:
    from studyapp.store import Store

    with Store.open(ctx.paths) as store:
        return store.drill_attempts("sdpa")


async def test_running_the_untouched_starter_in_the_app_is_no_failed_run(ctx):
    """The CLI leaves the starter as `start` wrote it out of the try's runs; the app counted
    it, so ctrl+r before writing anything made a first pass "Hard: passed after 1 failed run"."""
    stub = StubGrader()
    stub.grade = lambda *a, **k: {"status": "fail", "origin": "learner", "summary": "NotImplementedError",
                                  "hint": "", "checks": [], "seconds": 0.1}
    app = drills_app(ctx, stub)
    async with app.run_test(size=(120, 30)) as pilot:
        await open_sdpa(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
    assert _attempts(ctx) == []


async def test_a_grade_the_grader_could_not_run_is_no_failed_run_in_the_app(ctx):
    stub = StubGrader()
    stub.grade = lambda *a, **k: {"status": "error", "origin": "grader", "summary": "the worker died",
                                  "hint": "", "checks": [], "seconds": 0.1}
    app = drills_app(ctx, stub)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await open_sdpa(pilot)
        screen.query_one("#code", TextArea).text = "def sdpa(q, k, v):\n    return q\n"
        await pilot.press("ctrl+r")
        await settle(pilot)
    assert _attempts(ctx) == []
