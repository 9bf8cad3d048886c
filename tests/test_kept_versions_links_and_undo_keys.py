"""The drill's which-version question when the copy fails or a newer save lands, a mastery key
an undo takes out, a second link to one note named in the CLI, and suspend's lost output."""

from __future__ import annotations

import asyncio
import os

from history_helpers import cli
from tui.conftest import _no_early_grader, app_with_grader, ctx, settle, wait_for  # noqa: F401 - fixtures
from tui.other_editor import THEIRS, drill_app, save_as_other_program
from vault_fixtures import SDPA_NOTE, write


def test_keep_my_edits_when_their_version_cannot_be_copied_does_not_write_over_it(ctx):  # noqa: F811
    """Unsaved edits in a drill; another program saves the file; ctrl+s asks which version
    stays; the learner answers "Keep my edits" (n). The copy of the other version into
    `<workspace>/backups/` fails (here `backups` is a plain file; a read-only folder or a full
    disk do the same): the failed copy was swallowed (the helper that made it returned None), the app says
    "Kept your edits." and the save goes on, writing the app's code over the other program's
    version. That version is gone, with no copy and no word that the copy failed."""
    from textual.widgets import TextArea
    from tui.test_tui_drills import open_sdpa

    from studyapp.tui.screens.confirm import Confirm

    app = drill_app(ctx)
    theirs = THEIRS
    seen = {}

    async def session() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            screen = await open_sdpa(pilot)
            seen["path"] = screen.path
            (screen.path.parent / "backups").write_text("not a folder\n", encoding="utf-8")
            screen.query_one("#code", TextArea).insert("# mine\n")
            await settle(pilot)
            save_as_other_program(screen.path, theirs)
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: isinstance(app.screen, Confirm))
            await pilot.press("n")
            await settle(pilot)

    asyncio.run(session())
    path = seen["path"]
    versions = [p.read_text(encoding="utf-8", errors="replace")
                for p in path.parent.rglob("*") if p.is_file()]
    assert theirs in versions, (
        "\"Keep my edits\" wrote over the other program's version although its copy into "
        f"backups/ failed; the file now holds:\n{path.read_text(encoding='utf-8')[:200]}")


def test_inexact_undo_takes_out_a_mastery_key_the_review_added(tmp_path, capsys):
    """a.md is rated (it gets `mastery_level`); the learner deletes the `mastery_level` line;
    a second review adds it back. The learner then edits the note's body and runs `undo`: the
    undo is not byte-exact, and since 28bfedc it writes the mastery of the review under it
    (`mastery_level: 0.082`) instead of putting the key back as it was before the review
    (absent). An exact undo (no body edit) takes the key out; so did this one before 28bfedc."""
    vault, data = tmp_path / "vault", tmp_path / "data"
    note = write(vault / "a.md", SDPA_NOTE)
    cli(capsys, vault, data, "rate", "a.md", "--rating", "good", now="2026-11-20T09:00")
    text = note.read_text(encoding="utf-8")
    note.write_text("".join(line for line in text.splitlines(keepends=True)
                            if not line.startswith("mastery_level")), encoding="utf-8")
    cli(capsys, vault, data, "rate", "a.md", "--rating", "good", now="2026-11-20T09:30")
    assert "mastery_level" in note.read_text(encoding="utf-8")
    with note.open("a", encoding="utf-8") as f:
        f.write("\nAn edit of my own.\n")
    out = cli(capsys, vault, data, "undo", now="2026-11-20T09:31")
    after = note.read_text(encoding="utf-8")
    assert "review_count: 1\n" in after, out
    assert "An edit of my own." in after
    assert "mastery_level" not in after, (
        "the undo left the mastery_level key the undone review added (the note lacked it "
        f"before that review):\n{after[:300]}")


def test_cli_does_not_rate_the_second_link_to_one_hidden_note_as_another_note(tmp_path, capsys):
    """`l1.md -> .h/x.md` and `l2.md -> .h/x.md`: the vault studies the note once, as l1.md
    ("l2.md: the same file as l1.md (through a symbolic link): studied as l1.md"). Since
    16f2f9c the CLI's `note_path` accepts any link whose target the vault does not list, so
    `rate l2.md` is taken: a second, brand-new card for the same file (the review is a first
    review, `next_review` one day on) whose keys overwrite those l1.md's card wrote; the file and
    l1.md's card disagree, and `due` shows l1.md due today while the note says tomorrow. It
    should be refused with "name it as l1.md" (as before 16f2f9c), or rate l1.md's card."""
    from history_helpers import review_log

    from studyapp.cli import main

    vault, data = tmp_path / "vault", tmp_path / "data"
    write(vault / ".h" / "x.md", SDPA_NOTE.replace("drills: [sdpa]\n", ""))
    (vault / "l1.md").symlink_to(".h/x.md")
    (vault / "l2.md").symlink_to(".h/x.md")
    cli(capsys, vault, data, "rate", "l1.md", "--rating", "good", now="2026-11-20T09:00")
    capsys.readouterr()
    code = main(["rate", "l2.md", "--rating", "good", "--vault", str(vault), "--data-dir", str(data),
                 "--now", "2026-11-20T09:01"])
    err = capsys.readouterr().err
    paths = {row[0] for row in review_log(data)}
    assert code != 0 and "l1.md" in err or paths == {"l1.md"}, (
        f"`rate l2.md` made a second card for the note the vault studies as l1.md: reviews of {paths}; "
        f"the note says {[line for line in (vault / '.h' / 'x.md').read_text().splitlines() if 'review' in line]}")


def test_one_keep_my_edits_answers_for_the_version_it_copied(ctx):  # noqa: F811
    """Unsaved edits; another program saves the drill file (X1) and the poll asks which version
    stays; while the question is up the other program saves again (X2). "Keep my edits" copies
    the file as it is now (X2) into backups/ but records X1's text and mtime as seen, so the next
    poll asks the same question again about X2, already copied, and a second "Keep my edits"
    puts a second copy of X2 in backups/. One answer should settle the version it kept."""
    from textual.widgets import TextArea
    from tui.test_tui_drills import open_sdpa

    from studyapp.tui.screens.confirm import Confirm

    app = drill_app(ctx)
    asked = []

    async def session() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            screen = await open_sdpa(pilot)
            screen.query_one("#code", TextArea).insert("# mine\n")
            await settle(pilot)
            save_as_other_program(screen.path, "# X1\n")
            await wait_for(pilot, lambda: isinstance(app.screen, Confirm))  # the poll asks
            save_as_other_program(screen.path, "# X2\n")
            await pilot.press("n")
            await settle(pilot)
            await pilot.pause(2.5)  # two polls
            asked.append(isinstance(app.screen, Confirm))
            asked.append(sorted(p.read_text(encoding="utf-8")
                                for p in (screen.path.parent / "backups").glob("*.py")))

    asyncio.run(session())
    assert asked[1] == ["# X2\n"], asked
    assert not asked[0], ("after \"Keep my edits\" (which copied X2 into backups/), the poll asked "
                          "again about the same X2")


def test_suspend_whose_output_fails_does_not_say_running_it_again_records_twice(tmp_path, capsys):
    """`studyapp suspend a.md > /dev/full`: the note is suspended, and the error says "running it
    again would record it twice". Running it again records nothing ("a.md: already suspended"),
    like the commands b565251 marked `repeatable` (unsuspend and `start` say the same)."""
    import pytest
    from history_helpers import make_vault, run, with_output_to_a_full_disk

    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    done = with_output_to_a_full_disk(vault, data, "suspend", "a.md")
    assert done.returncode != 0 and "output could not be written" in done.stderr, done.stderr
    _, out, err = run(capsys, vault, data, "suspend", "a.md", now="2026-11-20T07:01")
    assert "already suspended" in out, out + err
    assert "record it twice" not in done.stderr, done.stderr
