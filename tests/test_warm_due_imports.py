"""A warm `studyapp due --json` touches `stat`, the caches and FSRS: it imports no parser of
notes, no drill catalog, no replay of the log, and nothing heavy (issue 15)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.vault_fixtures import USERS_NOTE

REPO = Path(__file__).resolve().parent.parent
OLD = 1_600_000_000
"""Older than the metadata cache's racy-mtime window, so the first run caches every note."""

NOT_ON_THE_WARM_PATH = (
    "yaml", "textual", "torch", "numpy", "pandas",  # heavy, or the UI's
    "studyapp.vault.fastyaml", "studyapp.vault.importer",  # parsing notes: the cache knows them
    # (the torch-free drill catalog may load: `due --json` lists today's due drills by title)
    "studyapp_kernels.registry", "studyapp_kernels.grading",  # nothing is graded
    "studyapp.history.replay",  # the log did not change
    "orjson",  # reading the log: it did not change
    "studyapp.views",  # the TUI's view objects
    # modules of the standard library only a rarer path needs (each costs a few ms to import)
    "statistics", "uuid", "logging", "socket", "secrets", "hashlib", "platform",
    "shutil",  # argparse asks it for the terminal's width (studyapp.cli._columns does not)
    # the other subcommands' modules: the command line names `due` (studyapp.cli.COMMANDS)
    "studyapp.commands.drills", "studyapp.commands.history", "studyapp.commands.dev",
    "studyapp.commands.reviews",
)

DRIVER = """
import json, sys
from studyapp.cli import main
code = main(sys.argv[2:])
with open(sys.argv[1], "w") as fh:
    json.dump(sorted(sys.modules), fh)
raise SystemExit(code)
"""


def run_due(tmp_path: Path, vault: Path, data: Path, name: str) -> tuple[str, list[str]]:
    modules = tmp_path / f"{name}.json"
    out = subprocess.run(
        [sys.executable, "-c", DRIVER, str(modules), "due", "--json", "--vault", str(vault),
         "--data-dir", str(data), "--now", "2026-06-15"],
        env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout, json.loads(modules.read_text())


def test_a_warm_due_json_imports_no_parser_catalog_or_replay(tmp_path):
    vault = tmp_path / "vault"
    for i in range(6):  # due, new, and paired through the text (cached after the first run)
        note = vault / "注意力" / f"n{i}.md"
        note.parent.mkdir(parents=True, exist_ok=True)
        text = USERS_NOTE if i % 2 else USERS_NOTE.replace("next_review:", "old_next_review:")
        note.write_text(text + "\nscores = q @ k.transpose(-2, -1) / sqrt(d_k); softmax\n", encoding="utf-8")
        os.utime(note, (OLD, OLD))
    data = tmp_path / "data"
    cold, _ = run_due(tmp_path, vault, data, "cold")
    warm, modules = run_due(tmp_path, vault, data, "warm")
    assert json.loads(warm) == json.loads(cold) and json.loads(warm), "same answer, and not empty"
    assert any(entry["drills"] for entry in json.loads(warm)), "pairings come from the cache"
    assert [m for m in modules if m in NOT_ON_THE_WARM_PATH] == []
