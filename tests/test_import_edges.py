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
