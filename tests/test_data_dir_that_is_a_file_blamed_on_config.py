"""A `--data-dir` (or STUDYAPP_DATA_DIR) that names a file is reported as an unreadable
config.toml.

`studyapp --data-dir ~/study.db due` (a user taking the data dir for the database file, or an
environment variable left pointing at one) answers "studyapp: error: ~/study.db/config.toml:
cannot be read: Not a directory; check that it is a file readable by you". There is no
config.toml to check: the data dir itself is a file (`config.load_settings` reads
`<data dir>/config.toml` first and words every OSError as the config file's fault). The user is
sent to look for a file that does not exist, and the path they mistyped is not called wrong.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from vault_fixtures import USERS_NOTE, write

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("how", ["option", "environment"])
def test_a_data_dir_that_is_a_file_is_named_as_such(tmp_path, how):
    write(tmp_path / "vault" / "note.md", USERS_NOTE)
    data = tmp_path / "study.db"
    data.write_bytes(b"not a folder")
    env = dict(os.environ, PYTHONPATH=str(ROOT), HOME=str(tmp_path / "home"))
    env.pop("STUDYAPP_VAULT", None)
    args = ["due", "--vault", str(tmp_path / "vault")]
    if how == "option":
        args += ["--data-dir", str(data)]
    else:
        env["STUDYAPP_DATA_DIR"] = str(data)
    result = subprocess.run([sys.executable, "-m", "studyapp", *args], env=env, cwd=ROOT,
                            timeout=120, capture_output=True, text=True)
    assert result.returncode == 2, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    said = lines[0]
    assert "config.toml" not in said, f"the data dir's problem is blamed on a config file:\n{said}"
    assert str(data) in said and "data dir" in said, said
    assert data.read_bytes() == b"not a folder"
