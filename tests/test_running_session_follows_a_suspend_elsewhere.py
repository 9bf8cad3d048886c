"""Found in tmux: a review session is running in the app ("6 new · 0 learning · 0 review")
and `studyapp suspend` in another shell suspends two of its notes, one of them the note on
screen. 1e17974 made Today, Notes and a new session follow such a write (the poll of SQLite's
data_version drops the cached cards), but the running session does not: its header keeps
counting both notes, and the suspended note stays on screen to be answered, only for the
rating to be refused ("was suspended elsewhere; it leaves this session unrated"). After the
poll that saw the write, the session must no longer count a note suspended elsewhere."""

from __future__ import annotations

import pytest
from test_reviews import LEGACY_NOTE, NEW_NOTE, T0

from studyapp.context import build_context
from studyapp.reviews import ReviewService


@pytest.fixture
def ctx(tmp_path):
    root = tmp_path / "vault"
    (root / "attn").mkdir(parents=True)
    for name in ("a", "b", "c"):
        (root / "attn" / f"{name}.md").write_bytes(NEW_NOTE.replace("# ", f"# {name} ", 1).encode())
    (root / "attn" / "mask.md").write_bytes(LEGACY_NOTE.encode())
    return build_context(vault=str(root), data_dir=str(tmp_path / "data"), now=T0)


@pytest.fixture
def facade(ctx):
    from studyapp.facade import StudyFacade

    study = StudyFacade(ctx)
    study.load()
    study.begin_review()
    yield study
    study.close()


def counted(progress) -> int:
    return progress.new + progress.learning + progress.review


def test_a_note_suspended_elsewhere_leaves_the_running_sessions_counts(facade, ctx):
    shown = facade.current_card().path
    queued = next(p for p in facade.session.order if p != shown)
    before = counted(facade.progress())

    with ReviewService(ctx) as cli:  # `studyapp suspend QUEUED` in another shell
        cli.load()
        assert cli.set_suspended(queued, True)
    facade.take_other_devices_reviews()  # the app's poll sees another process's write

    after = counted(facade.progress())
    assert after == before - 1, (
        f"the session still counts {queued}, suspended elsewhere: {before} -> {after}")
    assert queued not in facade.session.order
