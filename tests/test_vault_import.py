"""`studyapp import`: blocks added in the users' format, bodies byte for byte, idempotent."""

from __future__ import annotations

from vault_fixtures import PLAIN_NOTE, USERS_NOTE, write

from studyapp.cli import main
from studyapp.vault import Vault

BLOCK = ("---\ncreated: '2026-03-10'\nlast_reviewed: null\nnext_review: '2026-03-10'\nreview_count: 0\n"
         "difficulty: medium\nmastery_level: 0.0\ntags:\n- 位置编码\n- 位置编码/rope.md\nrelated_outlines: []\n---\n")


def run_import(vault, *args):
    return main(["import", *map(str, args), "--vault", str(vault), "--now", "2026-03-10T08:00"])


def snapshot_files(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_plain_notes_get_the_block_and_keep_their_body(tmp_path, capsys):
    vault = tmp_path / "vault"
    rope = write(vault / "位置编码" / "rope.md", PLAIN_NOTE)
    crlf = write(vault / "crlf.md", b"\xef\xbb\xbf" + PLAIN_NOTE.replace("\n", "\r\n").encode())
    users = write(vault / "ln.md", USERS_NOTE)
    assert run_import(vault) == 0
    assert rope.read_bytes().decode() == BLOCK + PLAIN_NOTE
    raw = crlf.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf---\r\ncreated: '2026-03-10'\r\n")
    assert raw.endswith(b"\r\n---\r\n" + PLAIN_NOTE.replace("\n", "\r\n").encode())
    assert b"tags: []\r\n" in raw
    assert users.read_text() == USERS_NOTE
    notes = Vault(vault).load().by_path()
    assert notes["位置编码/rope.md"].title == "旋转位置编码 RoPE 简介"
    assert notes["位置编码/rope.md"].next_review.isoformat() == "2026-03-10"
    assert "crlf.md" in capsys.readouterr().out


def test_import_twice_changes_nothing_and_dry_run_writes_nothing(tmp_path, capsys):
    vault = tmp_path / "vault"
    write(vault / "位置编码" / "rope.md", PLAIN_NOTE)
    outside = tmp_path / "clips"
    write(outside / "a.txt", PLAIN_NOTE)
    write(outside / "sub" / "b.markdown", "# 标题\n正文\n")
    write(outside / "ignored.pdf", b"%PDF")
    before = snapshot_files(vault)
    assert run_import(vault, "--dry-run") == 0
    assert run_import(vault, outside, "--dry-run") == 0
    assert snapshot_files(vault) == before
    assert "would add metadata block: 位置编码/rope.md" in capsys.readouterr().out
    assert run_import(vault) == 0 and run_import(vault, outside) == 0
    after = snapshot_files(vault)
    assert sorted(after) == ["clips/a.md", "clips/sub/b.md", "位置编码/rope.md"]
    assert run_import(vault) == 0 and run_import(vault, outside) == 0
    assert snapshot_files(vault) == after


def test_outside_files_never_overwrite_an_existing_note(tmp_path):
    vault = tmp_path / "vault"
    mine = write(vault / "a.md", USERS_NOTE)
    source = write(tmp_path / "a.txt", PLAIN_NOTE)
    assert run_import(vault, source) == 0
    assert mine.read_text() == USERS_NOTE
    copied = (vault / "a-2.md").read_text()
    assert copied.endswith("---\n" + PLAIN_NOTE) and "tags: []\n" in copied


def test_malformed_notes_are_reported_and_untouched(tmp_path, capsys):
    vault = tmp_path / "vault"
    bad = write(vault / "bad.md", b"---\ntitle: [\nplain text after\n")
    assert run_import(vault) == 1
    assert bad.read_bytes() == b"---\ntitle: [\nplain text after\n"
    assert "bad.md" in capsys.readouterr().err


def test_paths_inside_the_vault_are_refused(tmp_path, capsys):
    vault = tmp_path / "vault"
    write(vault / "x.md", PLAIN_NOTE)
    assert run_import(vault, vault / "x.md") == 2  # a usage error (README, "Exit codes")
    assert "inside the vault" in capsys.readouterr().err


def test_files_that_are_no_notes_are_reported_not_read_forever(tmp_path):
    """A FIFO never ends a read, /dev/zero neither, and a 70 MB file is past what a note may be
    (the vault would skip it): each is one problem line, nothing is copied, and the import ends
    (a real process: a hang here would otherwise hang the suite)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    src = tmp_path / "src"
    src.mkdir()
    os.mkfifo(src / "pipe.md")
    (src / "zeros.md").symlink_to("/dev/zero")
    with open(src / "huge.md", "wb") as handle:
        handle.truncate(70 * 1024 * 1024)  # sparse: no disk used
    write(src / "fine.md", PLAIN_NOTE)
    os.mkfifo(tmp_path / "lone.md")
    vault = tmp_path / "vault"
    vault.mkdir()
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    for given, dry in ((src, "--dry-run"), (src, None), (tmp_path / "lone.md", None)):
        args = [sys.executable, "-m", "studyapp", "import", str(given), "--vault", str(vault),
                "--data-dir", str(tmp_path / "data"), "--now", "2026-03-10T08:00", *([dry] if dry else [])]
        done = subprocess.run(args, capture_output=True, text=True, timeout=60, env=env)
        assert done.returncode == 1, done.stderr
        assert "Traceback" not in done.stderr
        for name in (["pipe.md", "zeros.md", "huge.md"] if given == src else ["lone.md"]):
            (line,) = [line for line in done.stderr.splitlines() if name in line]
            assert "not a regular file" in line or "too large" in line, line
    assert sorted(p.name for p in (vault / "src").iterdir()) == ["fine.md"]


def everything(root):
    """Every file and folder under `root` (an empty folder made in the vault counts too)."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


def test_a_dry_run_makes_nothing_in_the_vault_not_even_a_folder(tmp_path, capsys):
    """The first command on a vault made `.studyapp/log` in it, a dry run too (sync tools and
    git see that folder)."""
    vault = tmp_path / "vault"
    write(vault / "plain.md", PLAIN_NOTE)
    write(tmp_path / "clips" / "a.txt", PLAIN_NOTE)
    before = everything(vault)
    assert run_import(vault, "--dry-run") == 0
    assert run_import(vault, tmp_path / "clips", "--dry-run") == 0
    assert everything(vault) == before


def test_a_dry_run_names_the_files_the_import_makes(tmp_path, capsys):
    """Two sources of one name: the dry run showed both going to a.md, the import made a.md
    and a-2.md."""
    vault = tmp_path / "vault"
    vault.mkdir()
    sources = [write(tmp_path / "same" / "a.md", "# first\n"), write(tmp_path / "same" / "a.txt", "# second\n")]
    capsys.readouterr()
    assert run_import(vault, *sources, "--dry-run") == 0
    planned = [line.split(" -> ")[1] for line in capsys.readouterr().out.splitlines() if " -> " in line]
    assert run_import(vault, *sources) == 0
    made = [line.split(" -> ")[1] for line in capsys.readouterr().out.splitlines() if " -> " in line]
    assert planned == made == ["a.md", "a-2.md"]


def test_a_dry_run_of_two_identical_sources_says_what_the_import_does(tmp_path, capsys):
    """Two copies of one note: the import copies one and finds the other already imported;
    the dry run said it would copy both (a.md and a-2.md)."""
    vault = tmp_path / "vault"
    vault.mkdir()
    sources = [write(tmp_path / "one" / "a.md", "# same\n"), write(tmp_path / "two" / "a.md", "# same\n")]
    capsys.readouterr()
    assert run_import(vault, *sources, "--dry-run") == 0
    planned = capsys.readouterr().out.splitlines()
    assert run_import(vault, *sources) == 0
    made = capsys.readouterr().out.splitlines()
    assert [line.removeprefix("would ") for line in planned] == made, (planned, made)


def test_importing_a_folder_that_holds_the_vault_leaves_the_vault_out(tmp_path, capsys):
    """The vault's own notes were copied into it again (vault/<folder>/vault/a.md)."""
    home = tmp_path / "home"
    vault = home / "vault"
    write(vault / "a.md", USERS_NOTE)
    write(home / "clip.md", "# a clip\n")
    assert run_import(vault, home) == 0
    assert sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md")) == ["a.md", "home/clip.md"]


def test_a_block_the_vault_would_refuse_is_never_written(tmp_path, capsys, monkeypatch):
    """Whatever the standard block turns out to be for a note, import checks the note as the
    vault will read it before writing: a block it would refuse leaves the note as it was (and
    the dry run says so too), where it used to be written and the note skipped from then on."""
    from studyapp.vault import blocks

    vault = tmp_path / "vault"
    note = write(vault / "a.md", PLAIN_NOTE)
    monkeypatch.setattr(blocks, "default_block_lines", lambda path, today: "tags: [unclosed\n")
    for dry in (["--dry-run"], []):
        assert run_import(vault, *dry) == 1
        err = capsys.readouterr().err
        assert "skipped a.md: the metadata block would make the note unreadable" in err, err
        assert note.read_text() == PLAIN_NOTE


def test_a_note_named_with_a_line_separator_keeps_a_block_the_vault_reads(tmp_path, capsys):
    """U+2028/U+2029 in a name (web clippers copy them from page titles): the tags that hold the
    path are written with YAML's escapes, and the note is read with its path as its tag, after
    `import` as after a first review (both add the standard block)."""
    vault = tmp_path / "vault"
    for name in ("para\u2028graph.md", "end\u2029.md"):
        write(vault / "clips" / name, PLAIN_NOTE)
    assert run_import(vault) == 0
    raw = (vault / "clips" / "para\u2028graph.md").read_text()
    assert '- "clips/para\\Lgraph.md"\n' in raw and raw.endswith(PLAIN_NOTE), raw
    notes = Vault(vault).load()
    assert not notes.problems, notes.problems
    assert sorted(tag for n in notes.notes for tag in n.meta["tags"] if tag != "clips") == [
        "clips/end\u2029.md", "clips/para\u2028graph.md"]

    write(vault / "clips" / "rated\u2028.md", PLAIN_NOTE)
    assert main(["rate", "clips/rated\u2028.md", "--rating", "good", "--vault", str(vault),
                 "--now", "2026-03-10T08:00"]) == 0, capsys.readouterr().err
    rated = Vault(vault).load().by_path()["clips/rated\u2028.md"]
    assert rated.review_count == 1 and rated.meta["tags"] == ["clips", "clips/rated\u2028.md"]
