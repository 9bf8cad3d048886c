"""One odd note never takes the vault down: it is reported with a reason and left alone, and every
other note still loads, is listed by `due`, `import` and `doctor`, and can be rated."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from vault_fixtures import PLAIN_NOTE, USERS_NOTE, write

from studyapp.cli import main
from studyapp.errors import ExitCode

NOW = "2026-11-23T09:00:00+00:00"
GOOD = "good.md"
PLAIN = "plain.md"



def _errors(err: str) -> str:
    """stderr without the one-time `studyapp: note:` lines (where the review log lives)."""
    return "".join(line for line in err.splitlines(keepends=True) if not line.startswith("studyapp: note:"))

def _note_with(key_line_old: str, key_line_new: str) -> bytes:
    assert key_line_old in USERS_NOTE
    return USERS_NOTE.replace(key_line_old, key_line_new).encode()


def _nested(depth: int) -> bytes:
    return ("---\ncreated: '2026-03-02'\nx: " + "[" * depth + "]" * depth + "\n---\n# deep\n").encode()


def _alias_bomb() -> bytes:
    """The classic "billion laughs": nine levels of nine aliases each, well under 400 bytes."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    names = "abcdefghi"
    for prev, name in itertools.pairwise(names):
        lines.append(f"{name}: &{name} [" + ",".join(["*" + prev] * 9) + "]")
    text = "---\n" + "\n".join(lines) + "\n---\n# laughs\n"
    assert len(text) < 400
    return text.encode()


ODD_NOTES: dict[str, tuple[bytes, bytes, str]] = {
    # id: (file name as bytes, content, a word the reason must contain)
    "non-utf8-name": (b"caf\xe9.md", USERS_NOTE.encode(), "UTF-8"),
    "year-1-date": (b"year1.md", _note_with("last_reviewed: null", "last_reviewed: 0001-01-01")
                    .replace(b"review_count: 0", b"review_count: 2"), "last_reviewed"),
    "4301-digit-int": (b"bigint.md", _note_with("review_count: 0", "review_count: " + "7" * 4301),
                       "digits"),
    "4301-digit-other-key": (b"bigid.md", _note_with("difficulty: medium",
                                                     "difficulty: medium\nsource_id: " + "7" * 4301),
                             "digits"),
    "nesting-400": (b"deep400.md", _nested(400), "nested"),
    "alias-bomb": (b"bomb.md", _alias_bomb(), "alias"),
    "cr-only-line-endings": (b"oldmac.md", USERS_NOTE.replace("\n", "\r").encode(), "CR"),
    "23-digit-review-count": (b"huge_count.md",
                              _note_with("review_count: 0", "review_count: " + "9" * 23),
                              "review_count"),
    "negative-review-count": (b"negative.md", _note_with("review_count: 0", "review_count: -5"),
                              "review_count"),
    "review-count-many": (b"many.md", _note_with("review_count: 0", "review_count: many"),
                          "review_count"),
    "next-review-not-a-date": (b"notadate.md",
                               _note_with("next_review: '2026-03-02'", "next_review: not-a-date"),
                               "next_review"),
    "mastery-nan": (b"nan.md", _note_with("mastery_level: 0.0", "mastery_level: .nan"),
                    "mastery_level"),
    # valid YAML whose owned values no review could write back: reported, not scheduled
    "owned-key-twice": (b"twice.md", _note_with("review_count: 0", "review_count: 0\nreview_count: 5"),
                        "more than once"),
    "flow-style-block": (b"flow.md", b"---\n{created: '2025-10-19', last_reviewed: null, next_review: "
                         b"'2026-01-05', review_count: 0, mastery_level: 0.0}\n---\n# Flow\n\nbody\n",
                         "one flow-style {...} mapping"),
    "owned-value-on-the-next-line": (b"nextline.md", _note_with("next_review: '2026-03-02'",
                                                                "next_review:\n  '2026-03-02'"),
                                     "several lines"),
    # the users' block below a blank line: Obsidian reads it as text, and a review added a second
    # block in front of it, leaving the note's schedule behind
    "block-after-a-blank-line": (b"late.md", b"\n" + USERS_NOTE.encode(), "first line"),
    "block-after-blank-lines-crlf": (b"late-crlf.md", b" \r\n\r\n" + USERS_NOTE.replace("\n", "\r\n").encode(),
                                     "first line"),
}


def _display(name: bytes) -> str:
    return name.decode("utf-8", "backslashreplace")


def make_vault(root: Path, odd_name: bytes, odd_raw: bytes) -> Path:
    vault = root / "vault"
    write(vault / GOOD, USERS_NOTE)
    write(vault / PLAIN, PLAIN_NOTE)
    vault_bytes = os.fsencode(vault)
    with open(os.path.join(vault_bytes, odd_name), "wb") as fh:
        fh.write(odd_raw)
    old = time.time() - 3600  # old enough for the metadata cache to keep it
    for entry in os.scandir(vault_bytes):
        os.utime(entry.path, (old, old))
    return vault


def _args(vault: Path, data: Path, *command: str) -> list[str]:
    return [*command, "--vault", str(vault), "--data-dir", str(data), "--now", NOW]


@pytest.fixture
def no_torch(monkeypatch):
    monkeypatch.setattr("studyapp.doctor.torch_report", lambda: "stubbed in tests")


@pytest.mark.parametrize("case", list(ODD_NOTES))
def test_one_odd_note_is_reported_and_the_rest_works(case, tmp_path, capsys, no_torch):
    odd_name, odd_raw, reason_word = ODD_NOTES[case]
    vault = make_vault(tmp_path, odd_name, odd_raw)
    data = tmp_path / "data"
    shown = _display(odd_name)

    for _ in range(2):  # cold, then warm from the metadata cache
        assert main(_args(vault, data, "due", "--json")) == 0
        captured = capsys.readouterr()
        listed = [row["path"] for row in json.loads(captured.out)]
        assert GOOD in listed and PLAIN in listed and shown not in listed
        warning = [line for line in captured.err.splitlines() if shown in line]
        assert len(warning) == 1 and reason_word.lower() in warning[0].lower(), captured.err

    assert main(_args(vault, data, "doctor")) == 1
    out = capsys.readouterr().out
    assert "2 readable" in out and "1 with problems" in out
    assert any(shown in line and reason_word.lower() in line.lower() for line in out.splitlines())

    assert main(_args(vault, data, "rate", GOOD, "--rating", "good")) == 0
    capsys.readouterr()
    assert "review_count: 1" in (vault / GOOD).read_text(encoding="utf-8")

    # a name that is not UTF-8 cannot even be typed: it is an unknown note (a usage error);
    # any other odd note exists and rating it is refused
    refused = ExitCode.FAILED if (vault / shown).exists() else ExitCode.USAGE
    assert main(_args(vault, data, "rate", shown, "--rating", "good")) == refused
    err = _errors(capsys.readouterr().err)
    assert err.count("\n") == 1 and err.startswith("studyapp: error:"), err

    assert main(_args(vault, data, "import")) == 1  # 1: a note was skipped with a problem
    captured = capsys.readouterr()
    assert f"add metadata block: {PLAIN}" in captured.out
    assert shown in captured.err
    assert (vault / PLAIN).read_text(encoding="utf-8").startswith("---\ncreated:")

    with open(os.path.join(os.fsencode(vault), odd_name), "rb") as fh:
        assert fh.read() == odd_raw, "an odd note was written"


def _run_cli(*args: str, timeout: float) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    return subprocess.run([sys.executable, "-m", "studyapp", *args], capture_output=True,
                          text=True, timeout=timeout, env=env, check=False)


def test_nesting_100000_deep_does_not_crash_the_process(tmp_path):
    """libyaml's composer recurses in C: this note segfaulted every command that loaded it."""
    vault = make_vault(tmp_path, b"deep.md", _nested(100_000))
    done = _run_cli(*_args(vault, tmp_path / "data", "due"), timeout=60)
    assert done.returncode == 0, done.stderr
    assert GOOD in done.stdout
    reason = next(line for line in done.stderr.splitlines() if "deep.md" in line)
    assert "nested" in reason or "characters long" in reason, reason


def test_an_alias_bomb_is_refused_quickly_and_caches_nothing_large(tmp_path):
    vault = make_vault(tmp_path, b"bomb.md", _alias_bomb())
    data = tmp_path / "data"
    started = time.monotonic()
    done = _run_cli(*_args(vault, data, "due"), timeout=60)
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert elapsed < 10, f"due took {elapsed:.1f} s"
    assert sum(f.stat().st_size for f in data.rglob("*") if f.is_file()) < 2_000_000


def test_a_read_only_note_is_reported_and_never_rewritten(tmp_path, capsys, no_torch):
    vault = make_vault(tmp_path, b"locked.md", USERS_NOTE.encode())
    data = tmp_path / "data"
    locked = vault / "locked.md"
    locked.chmod(0o444)
    try:
        assert main(_args(vault, data, "rate", "locked.md", "--rating", "good")) == 1
        err = _errors(capsys.readouterr().err)
        assert "read-only" in err and err.count("\n") == 1
        assert locked.read_bytes() == USERS_NOTE.encode()
        assert (locked.stat().st_mode & 0o777) == 0o444
        assert main(_args(vault, data, "doctor")) == 1
        assert "locked.md: read-only" in capsys.readouterr().out
        assert main(_args(vault, data, "rate", GOOD, "--rating", "good")) == 0
    finally:
        locked.chmod(0o644)


def test_a_read_only_vault_folder_is_one_clear_line(tmp_path, capsys):
    vault = make_vault(tmp_path, b"other.md", USERS_NOTE.encode())
    data = tmp_path / "data"
    assert main(_args(vault, data, "due")) == 0  # the database exists before the folder locks
    capsys.readouterr()
    vault.chmod(0o555)
    try:
        assert main(_args(vault, data, "rate", GOOD, "--rating", "good")) == 1
        err = _errors(capsys.readouterr().err)
        assert err.count("\n") == 1 and "read-only" in err and "not written" in err, err
        assert (vault / GOOD).read_bytes() == USERS_NOTE.encode()
    finally:
        vault.chmod(0o755)


# -- owned values keep their type and style -----------------------------------------------


def _rate(tmp_path, raw: bytes, capsys, rating: str = "good") -> tuple[int, bytes, str]:
    vault = tmp_path / "vault"
    note = write(vault / "note.md", raw)
    code = main(_args(vault, tmp_path / "data", "rate", "note.md", "--rating", rating))
    return code, note.read_bytes(), _errors(capsys.readouterr().err)


def _value(raw: bytes, key: str) -> str:
    for line in raw.decode().splitlines():
        if line.startswith(key + ":"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"{key} not in note")


def test_a_float_review_count_counts_its_reviews_and_stays_a_float(tmp_path, capsys):
    code, after, err = _rate(tmp_path, _note_with("review_count: 0", "review_count: 3.0")
                             .replace(b"last_reviewed: null", b"last_reviewed: '2026-11-01'"), capsys)
    assert code == 0, err
    assert _value(after, "review_count") == "4.0"


@pytest.mark.parametrize("quote", ["'", '"'])
def test_quoted_numbers_stay_quoted(tmp_path, capsys, quote):
    raw = (_note_with("review_count: 0", f"review_count: {quote}3{quote}")
           .replace(b"mastery_level: 0.0", f"mastery_level: {quote}0.5{quote}".encode())
           .replace(b"last_reviewed: null", b"last_reviewed: '2026-11-01'"))
    code, after, err = _rate(tmp_path, raw, capsys)
    assert code == 0, err
    assert _value(after, "review_count") == f"{quote}4{quote}"
    mastery = _value(after, "mastery_level")
    assert mastery[0] == mastery[-1] == quote and 0 <= float(mastery[1:-1]) <= 1


def test_a_cr_only_note_is_refused_not_given_a_second_block(tmp_path, capsys):
    raw = USERS_NOTE.replace("\n", "\r").encode()
    code, after, err = _rate(tmp_path, raw, capsys)
    assert code == 1 and after == raw
    assert "CR" in err and err.count("\n") == 1


@pytest.mark.parametrize("value", ["9" * 23, "-5", "many", "3.5", "true", "[3]"])
def test_a_review_count_the_app_cannot_use_is_refused_and_not_written(tmp_path, capsys, value):
    raw = _note_with("review_count: 0", f"review_count: {value}")
    code, after, err = _rate(tmp_path, raw, capsys)
    assert code == 1 and after == raw, err
    assert "review_count" in err and "fix" in err and err.count("\n") == 1, err
    assert "Traceback" not in err


@pytest.mark.parametrize("key,value", [("next_review", "not-a-date"), ("last_reviewed", "0001-01-01"),
                                       ("created", "yesterday"), ("mastery_level", "high"),
                                       ("mastery_level", "1.5")])
def test_an_owned_value_the_app_cannot_use_is_reported_and_not_written(tmp_path, capsys, no_torch,
                                                                        key, value):
    line = next(line for line in USERS_NOTE.splitlines() if line.startswith(key + ":"))
    raw = _note_with(line, f"{key}: {value}")
    code, after, err = _rate(tmp_path, raw, capsys)
    assert code == 1 and after == raw, err
    assert key in err and "fix" in err, err
    assert main(["doctor", "--vault", str(tmp_path / "vault"), "--data-dir", str(tmp_path / "data")]) == 1
    assert f"note.md: {key}" in capsys.readouterr().out


def test_a_review_count_over_the_database_range_leaves_no_half_review(tmp_path, capsys):
    """It used to write the note, then fail in SQLite: a note claiming a review the history lacks."""
    import sqlite3

    raw = _note_with("review_count: 0", "review_count: " + "9" * 19)
    code, after, _err = _rate(tmp_path, raw, capsys)
    assert code == 1 and after == raw
    db = tmp_path / "data" / "studyapp.sqlite3"
    if db.exists():
        assert sqlite3.connect(db).execute("SELECT COUNT(*) FROM reviews").fetchone()[0] == 0


def test_import_into_a_read_only_folder_reports_each_note(tmp_path, capsys):
    vault = tmp_path / "vault"
    write(vault / "a.md", PLAIN_NOTE)
    write(vault / "sub" / "b.md", PLAIN_NOTE)
    (vault / "sub").chmod(0o555)
    try:
        assert main(_args(vault, tmp_path / "data", "import")) == 1
        captured = capsys.readouterr()
        assert "add metadata block: a.md" in captured.out
        assert "sub/b.md" in captured.err and "read-only" in captured.err
        assert (vault / "sub" / "b.md").read_text(encoding="utf-8") == PLAIN_NOTE
        assert (vault / "a.md").read_text(encoding="utf-8").startswith("---\n")
    finally:
        (vault / "sub").chmod(0o755)


def test_doctor_says_when_the_vault_folder_is_read_only(tmp_path, capsys, no_torch):
    vault = tmp_path / "vault"
    write(vault / GOOD, USERS_NOTE)
    vault.chmod(0o555)
    try:
        main(_args(vault, tmp_path / "data", "doctor"))
        out = capsys.readouterr().out
        assert "read-only" in out and str(vault) in out
    finally:
        vault.chmod(0o755)


def test_odd_folder_and_file_names_are_one_printable_line_each(tmp_path):
    from studyapp.vault import Vault

    vault = tmp_path / "vault"
    write(vault / GOOD, USERS_NOTE)
    root = os.fsencode(vault)
    os.makedirs(os.path.join(root, b"dossier-\xe9t\xe9"))
    for name in (b"dossier-\xe9t\xe9/inside.md", b"two\nlines.md", b"bell\x07.md"):
        with open(os.path.join(root, name), "wb") as fh:
            fh.write(USERS_NOTE.encode())
    snapshot = Vault(vault).load()
    assert [n.path for n in snapshot.notes] == [GOOD]
    shown = {p.path: p.reason for p in snapshot.problems}
    assert set(shown) == {"dossier-\\xe9t\\xe9", "two\\nlines.md", "bell\\x07.md"}
    assert "folder name is not valid UTF-8" in shown["dossier-\\xe9t\\xe9"]
    assert "control characters" in shown["two\\nlines.md"]


def test_import_does_not_copy_a_file_whose_name_is_not_utf8(tmp_path, capsys):
    outside = tmp_path / "outside"
    outside.mkdir()
    with open(os.path.join(os.fsencode(outside), b"caf\xe9.md"), "wb") as fh:
        fh.write(PLAIN_NOTE.encode())
    write(outside / "fine.md", PLAIN_NOTE)
    vault = tmp_path / "vault"
    vault.mkdir()
    assert main(_args(vault, tmp_path / "data", "import", str(outside))) == 1
    captured = capsys.readouterr()
    assert "caf\\xe9.md" in captured.err and "not valid UTF-8" in captured.err
    assert sorted(p.name for p in (vault / "outside").iterdir()) == ["fine.md"]


@pytest.mark.parametrize("odd_break", ["\r", "\x85", "\u2028", "\u2029"])
def test_a_block_with_a_line_break_only_yaml_sees_is_refused(tmp_path, capsys, odd_break):
    """YAML breaks lines at a lone CR, NEL and U+2028/9; the line editor would not, and would
    overwrite what follows (here a comment) as part of the value."""
    raw = _note_with("review_count: 0", f"review_count: 0{odd_break}# keep me").replace(
        b"last_reviewed: null", b"last_reviewed: '2026-11-01'")
    code, after, err = _rate(tmp_path, raw, capsys)
    assert code == 1 and after == raw, after.decode()
    assert "line break" in err and err.count("\n") == 1, err


def test_a_starter_deck_installed_read_only_is_seeded_writable(tmp_path, monkeypatch):
    """A package manager may install the deck read-only (the Nix store does): the user's copy
    must still be reviewable, not a vault of read-only notes."""
    from studyapp.paths import resolve_paths, seed_default_vault
    from studyapp.vault import Vault

    deck = tmp_path / "deck"
    write(deck / "topic" / "a.md", USERS_NOTE)
    for path in (deck / "topic" / "a.md", deck / "topic", deck):
        path.chmod(0o555 if path.is_dir() else 0o444)
    monkeypatch.setattr("studyapp.paths.cards_dir", lambda: deck)
    try:
        paths = resolve_paths(data_dir=str(tmp_path / "data"))
        assert seed_default_vault(paths)
        snapshot = Vault(paths.vault_dir).load()
        assert [n.path for n in snapshot.notes] == ["topic/a.md"] and snapshot.problems == []
        vault = Vault(paths.vault_dir)
        from datetime import date

        vault.write_review_keys(vault.read_note("topic/a.md"), {"review_count": 1,
                                                                "last_reviewed": date(2026, 11, 23)})
    finally:
        for path in (deck, deck / "topic", deck / "topic" / "a.md"):
            path.chmod(0o755 if path.is_dir() else 0o644)


def test_a_full_disk_while_writing_a_note_is_one_line_and_changes_nothing(tmp_path, capsys, monkeypatch):
    import errno

    def disk_full(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    from studyapp import atomic

    real_write = atomic._write_all  # every note write's bytes go through it
    vault = make_vault(tmp_path, b"other.md", USERS_NOTE.encode())
    monkeypatch.setattr("studyapp.atomic._write_all", disk_full)
    assert main(_args(vault, tmp_path / "data", "rate", GOOD, "--rating", "good")) == 1
    err = _errors(capsys.readouterr().err)
    assert err.count("\n") == 1 and os.strerror(errno.ENOSPC) in err and "not written" in err, err
    assert (vault / GOOD).read_bytes() == USERS_NOTE.encode()
    monkeypatch.setattr("studyapp.atomic._write_all", real_write)
    assert main(_args(vault, tmp_path / "data", "undo")) == 1  # nothing was recorded


@pytest.mark.parametrize("first_line, shown", [
    ("# Title with \x1b[31mANSI\x1b[0m and \x07 bell\tand tab", "Title with ␛[31mANSI␛[0m and ␇ bell and tab"),
    ("Plain \x1b]0;pwned\x07 title", "Plain ␛]0;pwned␇ title"),
    ("# C1 \x9b31m here \x7f", "C1 \ufffd31m here \u2421"),
])
def test_a_title_with_terminal_control_characters_is_shown_not_obeyed(tmp_path, capsys, first_line, shown):
    """A web-clipped title holding escape sequences must not recolour, retitle or ring the
    user's terminal when `due` prints it: control characters are shown as symbols."""
    vault = tmp_path / "vault"
    block = USERS_NOTE.split("\n---\n", 1)[0] + "\n---\n"
    write(vault / "clip.md", block + first_line + "\n\nbody\n")
    for command in (["due"], ["due", "--json"]):
        assert main(_args(vault, tmp_path / "data", *command)) == 0
        out = capsys.readouterr().out
        assert not any(ch in out for ch in "\x1b\x07\x9b\x7f\t"), repr(out)
        if command == ["due"]:
            assert shown[:18] in out  # the table may cut the title to the terminal's width
        else:
            assert json.loads(out)[0]["title"] == shown


@pytest.mark.parametrize("created", ["created: !!str 2025-10-19", "created:\n  '2025-10-19'",
                                     "created: '2025-10-19'\ncreated: '2025-10-20'"])
def test_an_odd_created_line_does_not_stop_reviews_which_never_write_it(tmp_path, capsys, created):
    """Only a block studyapp adds itself gets `created`: a review writes the four review keys,
    so an odd `created` line (a tag, the value on the next line, twice) is no reason to refuse."""
    vault = tmp_path / "vault"
    write(vault / GOOD, USERS_NOTE.replace("created: '2026-03-02'", created))
    assert created in (vault / GOOD).read_text(encoding="utf-8")
    assert main(_args(vault, tmp_path / "data", "rate", GOOD, "--rating", "good")) == 0, capsys.readouterr().err
    text = (vault / GOOD).read_text(encoding="utf-8")
    assert created in text and "review_count: 1" in text


def test_a_rule_below_a_blank_first_line_is_body_text(tmp_path, capsys):
    """Only a displaced review block is refused: a plain note opening with a blank line and a
    `---` rule (no review key between rules) is a plain note, and its first review adds the block."""
    vault = tmp_path / "vault"
    text = "\n---\nsome text between rules\n---\n# Rules\n\nbody\n"
    write(vault / "rules.md", text)
    common = ["--vault", str(vault), "--data-dir", str(tmp_path / "data"), "--now", NOW]
    assert main(["rate", "rules.md", "--rating", "good", *common]) == ExitCode.OK
    after = (vault / "rules.md").read_text(encoding="utf-8")
    assert after.startswith("---\ncreated: ") and after.endswith(text)
