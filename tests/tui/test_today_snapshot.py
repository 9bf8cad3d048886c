"""Today is drawn at start from the last start's snapshot, then refreshed after the load
(issue 15): the snapshot equals what the load computes while nothing changed, is refused when
the history, the day or a card's due time says it may be wrong, and a changed vault is redrawn."""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone

from studyapp.cards import LEARN_AHEAD
from studyapp.context import build_context
from studyapp.facade import StudyFacade
from studyapp.today_snapshot import valid_until
from studyapp.tui.app import StudyApp

from .conftest import FROZEN_NOW, settle
from .sample_vault import write_vault
from .test_tui_startup import SlowLoad, figure_text


def computed_today(ctx):
    """Load and compute Today with a fresh facade, as a start does (saving the snapshot)."""
    facade = StudyFacade(ctx)
    try:
        facade.load()
        return facade.today()
    finally:
        facade.close()


def snapshot_of(ctx):
    facade = StudyFacade(ctx)
    try:
        return facade.today_snapshot()
    finally:
        facade.close()


def at(ctx, now: str):
    """The same vault and data dir with the clock at `now`."""
    return build_context(vault=str(ctx.paths.vault_dir), data_dir=str(ctx.paths.data_dir), now=now, seed=False)


def test_no_snapshot_before_today_was_computed(ctx):
    write_vault(ctx.paths.vault_dir)
    assert snapshot_of(ctx) is None


def test_snapshot_equals_what_the_next_load_computes(ctx):
    write_vault(ctx.paths.vault_dir)
    first = computed_today(ctx)
    snapshot = snapshot_of(ctx)
    assert snapshot == first
    assert snapshot == computed_today(ctx)  # the refresh of the next start draws the same


def test_a_review_voids_the_snapshot(ctx):
    write_vault(ctx.paths.vault_dir)
    computed_today(ctx)
    facade = StudyFacade(ctx)
    try:
        facade.load()
        facade.begin_review()
        card = facade.current_card()
        facade.rate(card.path, 3)
    finally:
        facade.close()
    assert snapshot_of(ctx) is None
    after = computed_today(ctx)
    assert after.reviewed_today == 1
    assert snapshot_of(ctx) == after


def test_another_day_or_other_settings_void_the_snapshot(ctx):
    write_vault(ctx.paths.vault_dir)
    computed_today(ctx)
    assert snapshot_of(at(ctx, "2026-11-23T09:00:00+08:00")) is None
    ctx.settings.new_per_day = ctx.settings.new_per_day + 1
    assert snapshot_of(ctx) is None


def test_snapshot_expires_when_a_card_comes_due(ctx):
    write_vault(ctx.paths.vault_dir)
    computed_today(ctx)
    facade = StudyFacade(ctx)
    try:
        facade.load()
        items = facade.vault.items()
    finally:
        facade.close()
    now = datetime.fromisoformat(FROZEN_NOW)
    until = valid_until(items, now, LEARN_AHEAD)
    upcoming = [i.card.due for i in items if not i.card.suspended and i.card.due > now]
    assert until == min([*upcoming, until])
    assert until <= (now.astimezone().replace(hour=0, minute=0, second=0, microsecond=0)
                     + timedelta(days=1))
    later = (until + timedelta(seconds=1)).astimezone(timezone.utc).isoformat()
    assert snapshot_of(at(ctx, later)) is None
    just_before = (until - timedelta(seconds=1)).astimezone(timezone.utc).isoformat()
    assert snapshot_of(at(ctx, just_before)) is not None


def test_a_learning_step_due_soon_bounds_the_snapshot():
    class Card:
        suspended = False

        def __init__(self, due):
            self.due = due

    class Item:
        def __init__(self, due):
            self.card = Card(due)

    now = datetime(2026, 11, 22, 1, 0, tzinfo=timezone.utc)
    step = now + timedelta(minutes=30)
    assert valid_until([Item(step)], now, LEARN_AHEAD) == step - LEARN_AHEAD
    assert valid_until([Item(now - timedelta(days=1))], now, LEARN_AHEAD) > now + timedelta(minutes=30)


async def test_app_draws_the_snapshot_then_the_changed_vault(ctx):
    root = write_vault(ctx.paths.vault_dir)
    before = computed_today(ctx)
    # a new note appears while the app is closed: the snapshot cannot know, the load does
    (root / "新笔记.md").write_text("# 新的问题\n\n## 答案\n新的答案。\n", encoding="utf-8")
    os.utime(root / "新笔记.md", ns=(1, 1))
    study = SlowLoad(ctx)
    app = StudyApp(ctx, study=study)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert not app.study_ready
        shown = figure_text(app, "due-counts")
        assert [int(n) for n in shown.replace("·", " ").split()] == [before.new, before.learning, before.review]
        assert "checking the vault" in figure_text(app, "today-hint")
        study.go.set()
        await settle(pilot)
        assert app.study_ready
        refreshed = figure_text(app, "due-counts")
        assert "checking the vault" not in figure_text(app, "today-hint")
    after = snapshot_of(ctx)
    assert after is not None and after.new == before.new + 1
    assert [int(n) for n in refreshed.replace("·", " ").split()] == [after.new, after.learning, after.review]


async def test_after_the_app_drew_today_the_next_start_reads_no_note_body(ctx, monkeypatch):
    """The drills worked out for mastery are kept in the metadata cache after Today is drawn
    (`keep_today`), so the next start's Today, and its mastery, read no body."""
    from studyapp.vault.model import Note

    write_vault(ctx.paths.vault_dir, broken=False)
    for path in ctx.paths.vault_dir.rglob("*.md"):  # old enough for the metadata cache
        os.utime(path, ns=(1, 1))
    app = StudyApp(ctx, study=StudyFacade(ctx))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        drawn = app.study.today(keep_later=True)  # what it drew; keeps nothing itself
    assert ctx.paths.today_snapshot_file.is_file()

    def no_body(note):
        raise AssertionError(f"{note.path}: body read")

    monkeypatch.setattr(Note, "body", property(no_body))
    facade = StudyFacade(ctx)
    try:
        facade.load()
        assert facade.today() == drawn
    finally:
        facade.close()


def test_the_snapshot_looks_for_the_logs_the_history_writes():
    from studyapp import today_snapshot
    from studyapp.history import eventlog

    assert today_snapshot.LOG_SUFFIX == eventlog.LOG_SUFFIX


def test_checking_the_snapshot_imports_no_history_nor_database(ctx):
    """It runs before the first frame: only what the first frame needs anyway."""
    import subprocess
    import sys

    write_vault(ctx.paths.vault_dir)
    computed_today(ctx)
    code = ("import sys; from studyapp.context import build_context; from studyapp.facade import StudyFacade;"
            f"ctx = build_context(vault={str(ctx.paths.vault_dir)!r}, data_dir={str(ctx.paths.data_dir)!r},"
            f" now={FROZEN_NOW!r}, seed=False);"
            "assert StudyFacade(ctx).today_snapshot() is not None;"
            "print(sorted(m for m in sys.modules if m.startswith(('studyapp.history', 'sqlite3', 'fsrs'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def _snapshots_saved(monkeypatch) -> list[int]:
    """The row count of each metadata-cache snapshot written from now on (empty ones left out)."""
    from studyapp.vault.cache import MetadataCache

    saved: list[int] = []
    save = MetadataCache._save_snapshot

    def counting(self, db, bump=True):
        if self._rows:
            saved.append(len(self._rows))
        save(self, db, bump)

    monkeypatch.setattr(MetadataCache, "_save_snapshot", counting)
    return saved


def _old_vault(ctx) -> int:
    write_vault(ctx.paths.vault_dir, broken=False)
    notes = list(ctx.paths.vault_dir.rglob("*.md"))
    for path in notes:  # old enough for the metadata cache
        os.utime(path, ns=(1, 1))
    return len(notes)


def test_a_first_load_writes_the_cache_once_today_has_what_it_draws(ctx, monkeypatch):
    """A cold start: the rows the load parsed wait for the pairings Today works out, and both
    are written in one snapshot by `keep_today`, after the screen has its summary (the write
    of a 10,000-note vault's rows took 0.14 s off the time to a drawn Today)."""
    count = _old_vault(ctx)
    saved = _snapshots_saved(monkeypatch)
    facade = StudyFacade(ctx)
    try:
        facade.load()
        facade.today(keep_later=True)
        assert saved == []
        facade.keep_today()
        assert saved == [count]
    finally:
        facade.close()
    assert saved == [count]  # nothing left to write on closing


def test_rows_a_first_load_held_are_written_when_the_app_closes_without_today(ctx, monkeypatch):
    count = _old_vault(ctx)
    saved = _snapshots_saved(monkeypatch)
    facade = StudyFacade(ctx)
    try:
        facade.load()
        assert saved == []
    finally:
        facade.close()
    assert saved == [count]


async def test_rows_held_for_today_are_written_when_the_load_ends_on_another_screen(ctx, monkeypatch):
    """The learner went to Notes before the first load ended: Today computes nothing, so the
    rows it would have written with its pairings are written at once."""
    from studyapp.vault.cache import MetadataCache

    count = _old_vault(ctx)
    saved = _snapshots_saved(monkeypatch)
    study = SlowLoad(ctx)
    app = StudyApp(ctx, study=study)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("n")
        await pilot.pause()
        assert not app.study_ready and saved == []
        study.go.set()
        await settle(pilot)
        assert app.study_ready and type(app.screen).__name__ == "NotesScreen"
        await app.workers.wait_for_complete()
        assert saved == [count]  # written before quitting
        assert len(MetadataCache(ctx.paths.cache_file, ctx.paths.vault_dir.resolve()).read()) == count


def test_the_snapshot_written_once_holds_the_rows_and_the_pairings_today_worked_out(ctx):
    from studyapp.vault.cache import MetadataCache

    count = _old_vault(ctx)
    facade = StudyFacade(ctx)
    try:
        facade.load()
        facade.today()
        paired = {note.path for note in facade.vault.notes.values() if "_pairing_fresh" in note.__dict__
                  or "_pairing" in note.__dict__}
    finally:
        facade.close()
    rows = MetadataCache(ctx.paths.cache_file, ctx.paths.vault_dir.resolve()).read()
    assert len(rows) == count and paired
    assert {path for path, row in rows.items() if row[17] is not None} >= paired
