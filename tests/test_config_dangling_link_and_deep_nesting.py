"""Hunting `config.toml` in the data dir: a link to a file that is gone, a value nested deep.
README: a config "that is not a readable regular file (a folder, a FIFO) stops every command
with exit 2"; no traceback and no "internal error" ever reaches a user."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

STUDYAPP = str(Path(sys.executable).with_name("studyapp"))


def studyapp(data: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "STUDYAPP_DATA_DIR": str(data), "TZ": "UTC"}
    env.pop("STUDYAPP_VAULT", None)
    return subprocess.run([STUDYAPP, *args], capture_output=True, text=True, env=env, timeout=120)


def test_a_config_that_links_to_a_missing_file_is_an_error_not_the_defaults(tmp_path):
    """config.toml is a symbolic link into a dotfiles checkout that moved. It is no readable
    file, yet it is taken as "no config": every command runs on the defaults, silently, and
    the first one seeds `<data dir>/vault` with the starter deck instead of the user's vault."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").symlink_to(tmp_path / "dotfiles" / "studyapp.toml")

    result = studyapp(data, "due")

    assert result.returncode == 2, (result.stdout[:300], result.stderr)
    assert "config.toml" in result.stderr
    assert not (data / "vault").exists()


def test_a_deeply_nested_config_value_is_one_line_not_an_internal_error(tmp_path):
    """`new_per_day = [[[[...]]]]` 3,000 deep (a damaged or generated file): tomllib recurses,
    the RecursionError is not a TOMLDecodeError, and the user gets a whole Python traceback and
    "internal error (a bug in studyapp, please report it) ... it could not be saved" with exit
    70 instead of a line naming config.toml (exit 2)."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text("new_per_day = " + "[" * 3000 + "]" * 3000 + "\n")

    result = studyapp(data, "due")

    tail = result.stderr[-400:]
    assert "Traceback" not in result.stderr, tail
    assert result.returncode == 2 and "internal error" not in result.stderr, tail
    assert "config.toml" in result.stderr, tail
