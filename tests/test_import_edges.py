"""Hunting `studyapp import` (blocks in place, and `import PATH...`) with the files real users have:
long names, names holding characters YAML reads as line breaks, notes near the size limit,
read-only folders, folders linked into the vault. Each test drives the real command in a process
and compares the files byte for byte."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

STUDYAPP = str(Path(sys.executable).with_name("studyapp"))
ROOT = Path(__file__).resolve().parents[1]
NOW = "2026-03-02T09:00"


def studyapp(data: Path, vault: Path, *args: str) -> subprocess.CompletedProcess:
    """The installed command, running this checkout's code (the virtualenv may be another's)."""
    env = {**os.environ, "STUDYAPP_DATA_DIR": str(data), "TZ": "UTC",
           "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    env.pop("STUDYAPP_VAULT", None)
    return subprocess.run([STUDYAPP, "--vault", str(vault), "--now", NOW, *args],
                          capture_output=True, text=True, env=env, timeout=120)


def files_of(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` but studyapp's own `.studyapp`, with its bytes."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and ".studyapp" not in p.relative_to(folder).parts}


def setup(tmp_path: Path) -> tuple[Path, Path]:
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    data.mkdir()
    return vault, data


# -- a note's name as long as the file system allows ------------------------------------------

LONG_CHINESE = "注意力机制" * 15 + "缩放点积"  # 79 characters, 237 bytes: a web clip's title


def test_import_gives_the_block_to_a_note_whose_name_is_long_but_valid(tmp_path):
    """A note named by its Chinese title (240 bytes, under the 255 a name may have) is listed by
    `due` as a new note, yet `import` cannot give it its block: the temp file studyapp writes
    beside it (`.<name>.<8 hex>.studyapp-tmp`) is 23 bytes longer than the name."""
    vault, data = setup(tmp_path)
    name = LONG_CHINESE + ".md"
    assert len(name.encode()) == 240
    (vault / name).write_text("# 缩放点积\n答案\n", encoding="utf-8")
    due = studyapp(data, vault, "due", "--json")
    assert due.returncode == 0 and name in due.stdout, due.stderr  # the vault lists it

    result = studyapp(data, vault, "import")

    assert result.returncode == 0, result.stderr
    assert (vault / name).read_text(encoding="utf-8").startswith("---\ncreated: '2026-03-02'\n")


def test_import_copies_an_outside_file_whose_name_is_long_but_valid(tmp_path):
    """The same name outside the vault: `import PATH` reports "File name too long" and copies
    nothing, where the Anki import (`fitted_name`) picks a name that fits."""
    vault, data = setup(tmp_path)
    clips = tmp_path / "clips"
    clips.mkdir()
    (clips / (LONG_CHINESE + ".md")).write_text("# 缩放点积\n答案\n", encoding="utf-8")

    result = studyapp(data, vault, "import", str(clips))

    assert result.returncode == 0, result.stderr
    copied = list((vault / "clips").glob("*.md")) if (vault / "clips").is_dir() else []
    assert len(copied) == 1, result.stderr
    assert copied[0].read_text(encoding="utf-8").endswith("# 缩放点积\n答案\n")


def test_one_source_whose_free_name_is_too_long_does_not_stop_the_rest(tmp_path):
    """`S.md` is in the vault already with other text, so `S.txt` is tried as `S-2.md`: one byte
    over the 255 a name may have. `Path.exists()` raises ENAMETOOLONG, and the whole import stops
    half done: `a.md` was copied, `zz.md` after it never is (one line, exit 1)."""
    vault, data = setup(tmp_path)
    stem = "n" * 251  # `stem.txt` is 255 bytes, `stem.md` 254, `stem-2.md` 256
    (vault / "src").mkdir()
    (vault / "src" / f"{stem}.md").write_text("---\nreview_count: 0\n---\n# old\nA\n")
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.md").write_text("# a\n")
    (src / f"{stem}.txt").write_text("# two\nB\n")
    (src / "zz.md").write_text("# z\n")

    result = studyapp(data, vault, "import", str(src))

    # the long one may be skipped with a reason (or given a name that fits), but the import
    # goes on to zz.md and no line says the whole command failed
    assert (vault / "src" / "zz.md").exists(), (result.returncode, result.stderr[-300:])
    assert "studyapp: error:" not in result.stderr, result.stderr[-300:]


def test_the_source_whose_free_name_is_too_long_is_copied_under_a_name_that_fits(tmp_path):
    """The case above: `S.txt` is copied with its stem cut so that `-2.md` fits 255 bytes."""
    vault, data = setup(tmp_path)
    stem = "n" * 251
    (vault / "src").mkdir()
    (vault / "src" / f"{stem}.md").write_text("---\nreview_count: 0\n---\n# old\nA\n")
    src = tmp_path / "src"
    src.mkdir()
    (src / f"{stem}.txt").write_text("# two\nB\n")

    result = studyapp(data, vault, "import", str(src))

    assert result.returncode == 0, result.stderr
    fitted = vault / "src" / f"{stem[:250]}-2.md"  # 255 bytes
    assert fitted.read_text().endswith("# two\nB\n"), sorted(p.name for p in (vault / "src").iterdir())
    assert studyapp(data, vault, "import", str(src)).stdout.endswith("0 skipped with problems\n")  # found again


def test_a_vault_path_too_long_for_the_system_stops_only_that_source(tmp_path):
    """A source deep in folders fits the 4,096 bytes a path may have where it is, but not under
    a vault whose own path is longer: that source is skipped with the reason, the rest copied."""
    vault = tmp_path / ("v" * 200) / ("v" * 200) / "vault"
    data = tmp_path / "data"
    vault.mkdir(parents=True)
    data.mkdir()
    src = tmp_path / "s"
    deep = src.joinpath(*["d" * 200] * ((4000 - len(str(src))) // 201))
    deep.mkdir(parents=True)
    (deep / "deep.md").write_text("# deep\n")
    (src / "top.md").write_text("# top\n")
    assert len(str(vault / "s" / deep.relative_to(src) / "deep.md").encode()) > 4096

    result = studyapp(data, vault, "import", str(src))

    assert result.returncode == 1 and "studyapp: error:" not in result.stderr, result.stderr
    assert "deep.md: cannot copy it into the vault: File name too long; not copied" in result.stderr
    assert (vault / "s" / "top.md").read_text().endswith("# top\n")


# -- names holding characters YAML reads as a line break ----------------------------------------

def test_import_never_writes_a_block_that_makes_the_note_unreadable(tmp_path):
    """A note under `clips/` whose name holds U+2028 (LINE SEPARATOR, which web clippers copy
    from page titles) is a readable new note before `import`. Its standard block gets the path as
    a tag, PyYAML writes the U+2028 raw, and studyapp's own check then refuses the block: the
    import rewrote the note into one the vault skips, and tells the user to fix it."""
    vault, data = setup(tmp_path)
    (vault / "clips").mkdir()
    note = vault / "clips" / "para\u2028graph.md"
    note.write_bytes(b"# Para\nbody\n")
    before = studyapp(data, vault, "due", "--json")
    assert before.returncode == 0 and "Para" in before.stdout, before.stderr  # a note the vault studies

    studyapp(data, vault, "import")

    after = studyapp(data, vault, "due", "--json")
    # either the block is one the vault reads, or the note was left as it was
    assert "Para" in after.stdout, (note.read_bytes(), after.stderr)


# -- the size limit -----------------------------------------------------------------------------

NEAR_LIMIT = 64 * 1024 * 1024 - 10
"""Ten bytes under the 64 MiB a note may have: the standard block (~170 bytes) takes it over."""


def _big(path: Path) -> None:
    with open(path, "wb") as handle:
        handle.write(b"# Big\n")
        handle.truncate(NEAR_LIMIT)  # NUL bytes: valid UTF-8 text


def test_import_in_place_does_not_push_a_note_over_the_size_limit(tmp_path):
    """A block-less note just under the limit is studied; `import` adds the block and the note
    is then "too large for a note" and skipped for good: import made a usable note unusable."""
    vault, data = setup(tmp_path)
    _big(vault / "big.md")
    assert '"big.md"' in studyapp(data, vault, "due", "--json").stdout

    studyapp(data, vault, "import")

    after = studyapp(data, vault, "due", "--json")
    assert "too large" not in after.stderr, after.stderr
    assert '"big.md"' in after.stdout


def test_import_path_does_not_copy_a_file_the_vault_then_refuses_as_too_large(tmp_path):
    """README: `import` "does not copy a source the vault could not use: it reports it, and
    exits 1". A .txt just under the limit is copied with the block added (over the limit),
    reported as a copy with exit 0, and the next `due` says the note is too large."""
    vault, data = setup(tmp_path)
    src = tmp_path / "dump"
    src.mkdir()
    _big(src / "big.txt")

    result = studyapp(data, vault, "import", str(src))
    due = studyapp(data, vault, "due")

    assert "too large" not in due.stderr, (result.stdout, due.stderr)
    assert result.returncode == 1 or (vault / "dump" / "big.md").stat().st_size <= 64 * 1024 * 1024


def test_an_import_that_would_pass_the_size_limit_says_why_and_the_dry_run_too(tmp_path):
    """Both refusals above, in words, and the dry run says them first; nothing is written."""
    vault, data = setup(tmp_path)
    _big(vault / "big.md")
    src = tmp_path / "dump"
    src.mkdir()
    _big(src / "big.txt")
    before = files_of(vault)
    why = "the metadata block would make the note unreadable: 67,10"
    for dry in (("--dry-run",), ()):
        in_place = studyapp(data, vault, "import", *dry)
        copied = studyapp(data, vault, "import", *dry, str(src))
        assert in_place.returncode == copied.returncode == 1, (in_place.stderr, copied.stderr)
        assert f"skipped big.md: {why}" in in_place.stderr and "not written" in in_place.stderr
        assert f"big.txt: {why}" in copied.stderr and "bytes is too large for a note" in copied.stderr
        assert "not copied" in copied.stderr
        assert files_of(vault) == before


# -- --dry-run says what the import does --------------------------------------------------------

def test_dry_run_of_blocks_in_a_read_only_folder_says_what_the_import_does(tmp_path):
    """The dry run promises "would add metadata block: ro/a.md" (exit 0); the real run then
    skips it: "its folder ... is read-only; not written" (exit 1)."""
    vault, data = setup(tmp_path)
    (vault / "ro").mkdir()
    (vault / "ro" / "a.md").write_text("# Hi\nx\n")
    os.chmod(vault / "ro", 0o555)
    try:
        dry = studyapp(data, vault, "import", "--dry-run")
        real = studyapp(data, vault, "import")
    finally:
        os.chmod(vault / "ro", 0o755)
    assert real.returncode == 1 and "read-only" in real.stderr, real.stderr
    assert (dry.returncode, "add metadata block: ro/a.md" in dry.stdout) == (1, False), dry.stdout


def test_dry_run_of_a_copy_into_a_read_only_folder_says_what_the_import_does(tmp_path):
    """`import --dry-run clips` says "would copy ... -> ro/b.md" (exit 0); the import then says
    "the vault folder ... is read-only; not copied" (exit 1)."""
    vault, data = setup(tmp_path)
    (vault / "ro").mkdir()
    src = tmp_path / "ro"
    src.mkdir()
    (src / "b.md").write_text("# B\ny\n")
    os.chmod(vault / "ro", 0o555)
    try:
        dry = studyapp(data, vault, "import", "--dry-run", str(src))
        real = studyapp(data, vault, "import", str(src))
    finally:
        os.chmod(vault / "ro", 0o755)
    assert real.returncode == 1 and "read-only" in real.stderr, real.stderr
    assert (dry.returncode, "would copy" in dry.stdout) == (1, False), dry.stdout


def test_a_copy_into_a_new_folder_under_a_read_only_one_is_refused_dry_or_not(tmp_path):
    """`import ~/ro2/sub` makes `ro2/sub/` in the vault: where `ro2` is read-only, both runs say
    so and make nothing (root, whom modes do not stop, made the folder and the copy)."""
    vault, data = setup(tmp_path)
    (vault / "ro2").mkdir()
    src = tmp_path / "ro2"
    (src / "sub").mkdir(parents=True)
    (src / "sub" / "c.md").write_text("# C\nz\n")
    os.chmod(vault / "ro2", 0o555)
    try:
        dry = studyapp(data, vault, "import", "--dry-run", str(src))
        real = studyapp(data, vault, "import", str(src))
        made = sorted(p.name for p in (vault / "ro2").iterdir())
    finally:
        os.chmod(vault / "ro2", 0o755)
    for run in (dry, real):
        assert run.returncode == 1 and f"the vault folder {vault / 'ro2'} is read-only; not copied" in run.stderr, run.stderr
    assert made == []


def test_dry_run_of_a_note_that_is_not_utf8_past_its_head_says_what_the_import_does(tmp_path):
    """A note whose first 4 KB are fine and whose later bytes are Latin-1 (`café` pasted from an
    old file): the dry run promises its block, the import then refuses it ("not valid UTF-8")."""
    vault, data = setup(tmp_path)
    (vault / "a.md").write_bytes(b"# Title\n" + b"x" * 5000 + b"\ncaf\xe9\n")
    dry = studyapp(data, vault, "import", "--dry-run")
    real = studyapp(data, vault, "import")
    assert real.returncode == 1 and "not valid UTF-8" in real.stderr, real.stderr
    assert "would add metadata block: a.md" not in dry.stdout, dry.stdout


# -- a folder that is part of the vault through a link -------------------------------------------

def test_importing_a_folder_linked_into_the_vault_does_not_duplicate_its_notes(tmp_path):
    """README: a linked folder outside the vault is part of it, and `import` refuses a PATH
    inside the vault. `vault/linked -> ~/ext`: `import ~/ext` copies every note of it into
    `vault/ext/`, and each is then studied twice (two cards, two titles in `due`)."""
    vault, data = setup(tmp_path)
    ext = tmp_path / "ext"
    ext.mkdir()
    (ext / "e1.md").write_text("# E1\nbody\n")
    (vault / "linked").symlink_to(ext)
    assert studyapp(data, vault, "import").returncode == 0  # its block, through the link
    before = files_of(vault)

    result = studyapp(data, vault, "import", str(ext))

    assert files_of(vault) == before, (result.stdout, result.stderr)
    due = studyapp(data, vault, "due", "--json")
    assert due.stdout.count('"title": "E1"') == 1, due.stdout


def test_a_folder_or_a_note_linked_into_the_vault_is_left_out_of_a_folder_imported(tmp_path):
    """`import ~/docs`, where `vault/linked -> ~/docs/ext` and `vault/n.md -> ~/docs/n.md`: the
    other files are copied, those two (the vault's already) are not; a PATH under the linked
    folder is refused, naming the link."""
    vault, data = setup(tmp_path)
    docs = tmp_path / "docs"
    (docs / "ext" / "deep").mkdir(parents=True)
    (docs / "ext" / "deep" / "e1.md").write_text("# E1\nbody\n")
    (docs / "n.md").write_text("# N\n")
    (docs / "other.md").write_text("# Other\n")
    (vault / "linked").symlink_to(docs / "ext")
    (vault / "n.md").symlink_to(docs / "n.md")

    deep = studyapp(data, vault, "import", str(docs / "ext" / "deep"))
    result = studyapp(data, vault, "import", str(docs))

    assert deep.returncode == 2 and "through the link linked" in deep.stderr, deep.stderr
    assert result.returncode == 0, result.stderr
    assert sorted(files_of(vault / "docs")) == ["other.md"], result.stdout


def test_a_first_review_does_not_push_a_block_less_note_over_the_size_limit(tmp_path):
    """The first review of a block-less note gives it the standard block, as `import` does:
    just under the limit, the block took the note over it; the write happened, then the
    command failed reading back what it wrote, and `due` skipped the note for good."""
    vault, data = setup(tmp_path)
    _big(vault / "big.md")
    before = (vault / "big.md").stat().st_size

    rated = studyapp(data, vault, "rate", "big.md", "--rating", "good")

    assert rated.returncode == 1, rated.stderr
    assert "too large" in rated.stderr and "not written" in rated.stderr, rated.stderr
    assert (vault / "big.md").stat().st_size == before
    after = studyapp(data, vault, "due", "--json")
    assert '"big.md"' in after.stdout and "too large" not in after.stderr, after.stderr
