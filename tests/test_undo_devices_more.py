"""Device-scoped undo in an app left open: the review another device made meanwhile, and this
device's log moved meanwhile, are what the cache did not know yet when `u` chose what to take
back."""

from __future__ import annotations

import pytest
from fsrs import Rating
from history_helpers import cli, make_vault, review_log

from studyapp.context import build_context
from studyapp.drill_reviews import undo_newest_review
from studyapp.errors import UserError
from studyapp.reviews import ReviewService


def _devices(tmp_path):
    return make_vault(tmp_path / "vault"), tmp_path / "laptop", tmp_path / "phone"


def _ctx(vault, data, now):
    return build_context(vault=str(vault), data_dir=str(data), now=now)


def _logged_kinds(vault, data) -> list[str]:
    import json

    from studyapp.history.sync import device_id
    from studyapp.paths import resolve_paths

    own = vault / ".studyapp" / "log" / f"{device_id(resolve_paths(vault, data))}.jsonl"
    return [json.loads(line)["kind"] for line in own.read_text().splitlines()]


def test_the_apps_undo_refuses_a_review_another_device_reviewed_since_it_last_synced(
        tmp_path, capsys):
    """The app on the laptop rated a note; the phone rated it later and its log line came in;
    `u` before the app's next poll took the laptop's review back from under the phone's (the
    app's cache did not know of it yet)."""
    from studyapp.facade import StudyFacade

    vault, laptop, phone = _devices(tmp_path)
    study = StudyFacade(_ctx(vault, laptop, "2026-11-20T08:00"))
    try:
        study.load()
        study.begin_review()
        study.rate("a.md", int(Rating.Good))
        cli(capsys, vault, phone, "rate", "a.md", "--rating", "again", now="2026-11-21T08:00")
        before = (vault / "a.md").read_bytes()

        with pytest.raises(UserError, match="another device"):
            study.undo()

        assert (vault / "a.md").read_bytes() == before
        assert _logged_kinds(vault, laptop) == ["review"]
    finally:
        study.close()


def test_an_open_service_follows_its_log_moved_meanwhile_before_undo(tmp_path, capsys):
    """`studyapp history-log data-dir` while the app was open: its `u` read the moved file's
    old place, found none of its own reviews there, and said every review was another
    device's."""
    vault, laptop, _ = _devices(tmp_path)
    cli(capsys, vault, laptop, "rate", "a.md", "--rating", "good", now="2026-11-20T08:00")
    before = (vault / "a.md").read_bytes()
    with ReviewService(_ctx(vault, laptop, "2026-11-20T08:05")) as open_app:
        cli(capsys, vault, laptop, "history-log", "data-dir", now="2026-11-20T08:04")

        done = undo_newest_review(open_app)

    assert done is not None and done.key == "a.md"
    assert (vault / "a.md").read_bytes() != before
    assert review_log(laptop) == []
