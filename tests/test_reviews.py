"""Recording reviews end to end: file + database together, undo, suspend, identity, repair."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest
from fsrs import State

from studyapp.context import build_context
from studyapp.errors import UserError
from studyapp.reviews import ReviewService
from studyapp.schedule import start_of_day

T0 = datetime(2026, 4, 6, 9, 0, tzinfo=timezone.utc)

NEW_NOTE = """---
created: '2026-04-01'
last_reviewed: null
next_review: '2026-04-01'
review_count: 0
difficulty: medium
mastery_level: 0.0
tags:
- 注意力
aliases: [softmax 缩放]
related_outlines: []
---
# 为什么要除以 根号 d_k

## 面试标准答案
点积的方差随维度增长，缩放让 softmax 不至于饱和。

## 详细技术解析
自己写的测试正文。
"""

LEGACY_NOTE = """---
created: '2026-02-01'
last_reviewed: '2026-03-27'
next_review: '2026-04-06'
review_count: 4
difficulty: hard
mastery_level: 0.31
tags:
- 掩码
---
# 因果掩码怎么构造

## 面试标准答案
上三角置为负无穷。
"""


@pytest.fixture
def vault(tmp_path):
    root = tmp_path / "vault"
    (root / "attn").mkdir(parents=True)
    (root / "attn" / "scale.md").write_bytes(NEW_NOTE.encode())
    (root / "attn" / "mask.md").write_bytes(LEGACY_NOTE.replace("\n", "\r\n").encode())
    return root


@pytest.fixture
def ctx(vault, tmp_path):
    return build_context(vault=str(vault), data_dir=str(tmp_path / "data"), now=T0)


@pytest.fixture
def service(ctx):
    with ReviewService(ctx) as s:
        s.load()
        yield s


def rows(service, table):
    return [tuple(r) for r in service.store.conn.execute(f"SELECT * FROM {table} ORDER BY 1")]


def test_rating_writes_only_owned_keys_and_logs_the_review(service, vault):
    before = (vault / "attn" / "scale.md").read_bytes()
    result = service.record_review("attn/scale.md", "good", 12.5)
    after = (vault / "attn" / "scale.md").read_text()
    assert "last_reviewed: '2026-04-06'" in after and "review_count: 1" in after
    assert "aliases: [softmax 缩放]" in after and after.endswith("自己写的测试正文。\n")
    changed = [(a, b) for a, b in zip(before.decode().splitlines(), after.splitlines()) if a != b]
    assert {a.split(":")[0] for a, _ in changed} == {"last_reviewed", "next_review",
                                                     "review_count", "mastery_level"}
    (review,) = service.store.reviews()
    assert review.rating == 3 and review.duration_ms == 12500
    assert review.state_before is None and review.state_after == State.Learning
    assert result.interval == timedelta(minutes=10)
    assert service.store.journal() == []


def test_a_month_of_reviews_through_the_service(service, ctx, vault):
    now, intervals = T0, []
    for _ in range(12):
        ctx.frozen_now = now
        result = service.record_review("attn/scale.md", "good")
        intervals.append(result.interval)
        now = result.due
        if now > T0 + timedelta(days=31):
            break
    days = [i.days for i in intervals if i.days >= 1]
    assert days == sorted(days) and days[-1] >= 7
    note = service.vault.read_note("attn/scale.md")
    assert note.review_count == len(intervals)
    assert note.next_review == result.due.astimezone().date()
    assert 0 < note.mastery_level <= 1


def test_again_comes_back_in_the_same_session(service, ctx):
    items = service.note_cards(service.vault.load().notes)
    assert [i.note.path for i in service.queue(items)] == ["attn/mask.md", "attn/scale.md"]
    result = service.record_review("attn/scale.md", "again")
    assert result.interval == timedelta(minutes=1)
    ctx.frozen_now = T0 + timedelta(seconds=30)
    queue = service.queue(service.note_cards(service.vault.load().notes))
    # the legacy note is due; the failed one returns within the learn-ahead window
    assert [i.note.path for i in queue] == ["attn/mask.md", "attn/scale.md"]
    ctx.frozen_now = T0 + timedelta(minutes=2)
    queue = service.queue(service.note_cards(service.vault.load().notes))
    assert queue[0].note.path == "attn/scale.md"  # a due learning step goes first


def test_daily_new_limit(service, ctx):
    ctx.settings.new_per_day = 1
    service.record_review("attn/scale.md", "easy")
    queue = service.queue(service.note_cards(service.vault.load().notes))
    assert [i.note.path for i in queue] == ["attn/mask.md"]
    ctx.settings.new_per_day = 0
    ctx.settings.reviews_per_day = 0
    assert service.queue(service.note_cards(service.vault.load().notes)) == []


def test_migrated_note_keeps_its_due_date(service, ctx):
    (item,) = [i for i in service.note_cards(service.vault.load().notes)
               if i.note.path == "attn/mask.md"]
    assert not item.is_new and item.card.state == State.Review
    assert item.card.due == start_of_day(date(2026, 4, 6))
    assert item.card.stability == 10.0
    ctx.frozen_now = T0 - timedelta(days=2)
    assert [i.note.path for i in service.queue(service.note_cards(service.vault.load().notes))
            ] == ["attn/scale.md"]  # not due before its date, and not treated as new
    ctx.frozen_now = T0
    result = service.record_review("attn/mask.md", "good")
    (review,) = service.store.reviews()
    assert review.state_before == State.Review and review.elapsed_days >= 10
    assert result.interval > timedelta(days=10)
    assert b"\r\n" in (service.vault.root / "attn/mask.md").read_bytes()
    assert b"\n" not in (service.vault.root / "attn/mask.md").read_bytes().replace(b"\r\n", b"")


def test_undo_restores_bytes_and_rows_exactly(service, vault):
    path = vault / "attn" / "mask.md"
    service.record_review("attn/scale.md", "good")
    bytes_before, reviews_before = path.read_bytes(), rows(service, "reviews")
    cards_before, notes_before = rows(service, "cards"), rows(service, "notes")
    service.record_review("attn/mask.md", "again")
    assert path.read_bytes() != bytes_before
    done = service.undo_last()
    assert done["exact"] and done["path"] == "attn/mask.md"
    assert path.read_bytes() == bytes_before
    assert rows(service, "reviews") == reviews_before
    assert rows(service, "cards") == cards_before
    # the note row stays (identity), but its hash is the restored file's again
    assert [r[:2] for r in rows(service, "notes")] == [r[:2] for r in notes_before] + [
        (2, "attn/mask.md")]
    service.undo_last()
    assert rows(service, "reviews") == [] and rows(service, "cards") == []
    assert (vault / "attn" / "scale.md").read_bytes() == NEW_NOTE.encode()
    with pytest.raises(UserError, match="nothing to undo"):
        service.undo_last()


def test_undo_after_an_edit_restores_only_the_owned_keys(service, vault):
    path = vault / "attn" / "scale.md"
    service.record_review("attn/scale.md", "good")
    path.write_bytes(path.read_bytes() + "我后来补充的一行。\n".encode())
    done = service.undo_last()
    assert not done["exact"]
    text = path.read_text()
    assert text.endswith("我后来补充的一行。\n")
    assert text.replace("我后来补充的一行。\n", "") == NEW_NOTE


def test_rating_a_note_changed_on_disk_mid_session(service, vault):
    snap_note = service.vault.load().by_path()["attn/scale.md"]
    path = vault / "attn" / "scale.md"
    edited = NEW_NOTE.replace("aliases: [softmax 缩放]", "aliases: [缩放点积]") + "新段落。\n"
    path.write_bytes(edited.encode())
    assert snap_note.content_hash != service.vault.read_note("attn/scale.md").content_hash
    service.record_review("attn/scale.md", "hard")
    text = path.read_text()
    assert "aliases: [缩放点积]" in text and text.endswith("新段落。\n")
    assert "review_count: 1" in text
    assert service.undo_last()["exact"]
    assert path.read_text() == edited


def test_suspended_notes_are_never_due(service, ctx):
    assert service.set_suspended("attn/mask.md", True)
    assert not service.set_suspended("attn/mask.md", True)
    queue = service.queue(service.note_cards(service.vault.load().notes))
    assert [i.note.path for i in queue] == ["attn/scale.md"]
    assert service.set_suspended("attn/mask.md", False)
    queue = service.queue(service.note_cards(service.vault.load().notes))
    assert "attn/mask.md" in [i.note.path for i in queue]


def test_identity_survives_a_rename_and_deleted_notes_keep_history(service, vault):
    service.record_review("attn/scale.md", "good")
    key = service.store.note_by_path("attn/scale.md").key
    (vault / "moved").mkdir()
    os.rename(vault / "attn" / "scale.md", vault / "moved" / "缩放.md")
    service.load()
    assert service.store.note_by_path("moved/缩放.md").key == key
    # renamed *and* edited: matched by title
    text = (vault / "moved" / "缩放.md").read_text() + "补一句。\n"
    (vault / "moved" / "缩放.md").unlink()
    (vault / "again.md").write_text(text)
    service.load()
    assert service.store.note_by_path("again.md").key == key
    (vault / "again.md").unlink()
    service.load()
    assert service.store.note_by_key(key).deleted
    assert len(service.store.reviews()) == 1  # history kept


def test_unknown_note_is_a_clear_error(service):
    with pytest.raises(UserError, match="no such note"):
        service.record_review("attn/nope.md", "good")
    assert service.store.reviews() == [] and service.store.journal() == []


CRASH_SCRIPT = """
import os, sys
from datetime import datetime, timezone
from studyapp.context import build_context
from studyapp import reviews
from studyapp.store import Store

def crash(*args, **kwargs):
    os._exit(9)  # the process dies after the file write, before the database commit

Store.insert_review = crash
ctx = build_context(vault=sys.argv[1], data_dir=sys.argv[2],
                    now=datetime(2026, 4, 6, 9, 0, tzinfo=timezone.utc))
service = reviews.ReviewService(ctx)
service.load()
service.record_review("attn/scale.md", "good")
"""


def test_a_crash_between_file_and_database_is_repaired(vault, tmp_path, ctx):
    data = tmp_path / "data"
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    proc = subprocess.run([sys.executable, "-c", CRASH_SCRIPT, str(vault), str(data)], env=env)
    assert proc.returncode == 9
    assert "review_count: 1" in (vault / "attn" / "scale.md").read_text()  # file written
    with ReviewService(ctx) as service:
        assert service.repaired == ["attn/scale.md: finished an interrupted review"]
        (review,) = service.store.reviews()
        assert review.rating == 3
        assert review.hash_after == service.vault.read_note("attn/scale.md").content_hash
        assert service.store.card(review.note_key).state == State.Learning
        assert service.store.journal() == []


def test_a_crash_before_the_file_write_is_dropped(vault, tmp_path, ctx):
    data = tmp_path / "data"
    script = CRASH_SCRIPT.replace("Store.insert_review = crash",
                                  "from studyapp.vault import Vault\nVault.rewrite_review_keys = crash")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    assert subprocess.run([sys.executable, "-c", script, str(vault), str(data)],
                          env=env).returncode == 9
    assert (vault / "attn" / "scale.md").read_bytes() == NEW_NOTE.encode()
    with ReviewService(ctx) as service:
        assert service.repaired == [
            "attn/scale.md: dropped an interrupted review (file not written)"]
        assert service.store.reviews() == [] and service.store.journal() == []


def test_cli_rate_undo_suspend_stats(vault, tmp_path, capsys):
    from studyapp.cli import main

    common = ["--vault", str(vault), "--data-dir", str(tmp_path / "data"),
              "--now", "2026-04-06T10:00"]
    assert main(["rate", "attn/scale.md", "--rating", "easy", *common]) == 0
    out = capsys.readouterr().out
    assert out.startswith("attn/scale.md: easy; next review 2026-04-")
    assert main(["rate", "attn/missing.md", "--rating", "good", *common]) == 2  # a usage error: the command line names no note
    assert "no such note" in capsys.readouterr().err
    assert main(["suspend", "attn/mask.md", *common]) == 0
    assert main(["stats", "--json", *common]) == 0
    import json

    capsys.readouterr()
    assert main(["stats", "--json", *common]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["total_reviews"] == 1 and data["counts_by_state"]["suspended"] == 1
    assert main(["undo", *common]) == 0
    assert "undid the easy review of attn/scale.md" in capsys.readouterr().out
    assert (vault / "attn" / "scale.md").read_bytes() == NEW_NOTE.encode()
    assert main(["optimize", *common]) == 1
    assert "at least 512" in capsys.readouterr().err


def _legacy(day_reviewed: str, next_review: str, title: str) -> str:
    return (LEGACY_NOTE.replace("'2026-03-27'", f"'{day_reviewed}'")
            .replace("'2026-04-06'", f"'{next_review}'").replace("因果掩码怎么构造", title))


def test_due_json_is_the_session_queue(tmp_path, capsys):
    import json

    from studyapp.cli import main

    vault = tmp_path / "v"
    vault.mkdir()
    # Overdue by 5 days; two due today (equal recall: at its due date a migrated note sits at
    # the desired retention, so ties go by path); not due yet; three new notes.
    (vault / "overdue.md").write_text(_legacy("2026-03-22", "2026-04-01", "过期的"))
    (vault / "short.md").write_text(_legacy("2026-04-04", "2026-04-06", "短间隔"))
    (vault / "long.md").write_text(_legacy("2026-03-07", "2026-04-06", "长间隔"))
    (vault / "later.md").write_text(_legacy("2026-04-01", "2026-04-20", "以后"))
    for name in ("n1", "n2", "n3"):
        (vault / f"{name}.md").write_text(NEW_NOTE)
    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text("new_per_day = 2\n")
    common = ["--vault", str(vault), "--data-dir", str(data), "--now", "2026-04-06T12:00"]
    assert main(["suspend", "n1.md", *common]) == 0
    capsys.readouterr()
    assert main(["due", "--json", *common]) == 0
    items = json.loads(capsys.readouterr().out)
    assert [i["path"] for i in items] == ["overdue.md", "long.md", "short.md", "n2.md", "n3.md"]
    overdue, long_, short = items[:3]
    assert overdue["days_overdue"] == 5 and short["days_overdue"] == 0
    assert overdue["retrievability"] < short["retrievability"] == pytest.approx(0.9, abs=1e-3)
    assert overdue["due_at"].startswith("2026-04-01T00:00:00")
    assert all(i["suspended"] is False for i in items)
    assert items[3]["new"] and items[3]["retrievability"] is None


def test_queue_orders_overdue_then_lowest_recall():
    from dataclasses import dataclass

    from studyapp.cards import NoteCard, session_queue
    from studyapp.config import Settings
    from studyapp.schedule import build_scheduler
    from studyapp.store import CardRow

    @dataclass
    class N:
        path: str
        next_review: date | None = None

    now = datetime(2026, 4, 6, 12, 0).astimezone()
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)

    def card(stability, last_days_ago, due):
        return CardRow(0, State.Review, None, stability, 5.0, due,
                       now - timedelta(days=last_days_ago))

    items = [
        NoteCard(N("fresh.md"), 1, card(50.0, 10, today + timedelta(hours=1)), False),
        NoteCard(N("weak.md"), 2, card(2.0, 10, today + timedelta(hours=2)), False),
        NoteCard(N("late.md"), 3, card(90.0, 3, today - timedelta(days=1)), False),
        NoteCard(N("future.md"), 4, card(9.0, 1, now + timedelta(days=3)), False),
    ]
    scheduler = build_scheduler(Settings(), fuzz=False)
    queue = session_queue(items, scheduler, now, new_left=5, reviews_left=5)
    # overdue first even though its recall is the highest; then weakest recall first
    assert [i.note.path for i in queue] == ["late.md", "weak.md", "fresh.md"]
    assert [i.note.path for i in session_queue(items, scheduler, now, 5, 2)] == [
        "late.md", "weak.md"]


def test_review_modules_do_not_import_torch_textual_or_pandas():
    code = ("import sys, studyapp.cli, studyapp.reviews, studyapp.stats, studyapp.optimize, "
            "studyapp.commands.reviews; studyapp.cli.build_parser(); "
            "print(sorted(m for m in ('torch', 'textual', 'pandas') if m in sys.modules))")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "[]", out.stderr


def test_a_drill_pass_raises_the_mastery_of_notes_that_list_it(service, vault):
    path = vault / "attn" / "scale.md"
    path.write_text(NEW_NOTE.replace("related_outlines: []", "related_outlines: []\ndrills: [sdpa]"))
    service.record_review("attn/scale.md", "easy")
    before = service.vault.read_note("attn/scale.md").mastery_level
    service.store.record_drill_attempt("sdpa", "pass", attempted_at=T0)
    assert service.refresh_mastery("sdpa") == ["attn/scale.md"]
    after = service.vault.read_note("attn/scale.md").mastery_level
    # before: 0.75 * memory + 0.25 * 0 (no drill passed); after: the same + 0.25 * 1
    assert after == pytest.approx(before + 0.25, abs=0.002)
    assert service.refresh_mastery("sdpa") == []  # nothing changed, nothing written
