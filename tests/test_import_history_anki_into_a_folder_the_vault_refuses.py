"""`import-history anki --folder DIR` with a folder name the vault itself refuses (a control
character such as a tab, bytes that are not UTF-8): the import says "imported 2 notes, 3
reviews" and exits 0, but every note it wrote is skipped by the vault ("folder name holds
control characters"), so none of them is ever due and the logged reviews name notes no command
can use. Such a folder should be refused up front (as a hidden one is), writing nothing."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest
from test_anki_import import collection_bytes

from studyapp.cli import main

NOW = "2026-06-01T10:00"
T0 = 1_767_254_400_000  # 2026-01-01T08:00Z, epoch ms
DAY = 86_400_000


def export(tmp_path: Path) -> Path:
    notes = [(T0 - DAY, "g-attn", "ml", "Why scale by sqrt(d_k)?\x1fDot products grow."),
             (T0 - DAY + 1, "g-kv", "", "KV cache\x1fKeep past keys and values.")]
    cards = [(100, notes[0][0], 0), (200, notes[1][0], 0)]
    revlog = [(T0, 100, 3, 4000, 0), (T0 + 2 * DAY, 100, 3, 4000, 1), (T0 + DAY, 200, 4, 2000, 0)]
    path = tmp_path / "deck.apkg"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("collection.anki2", collection_bytes(tmp_path, notes, cards, revlog))
    return path


@pytest.mark.parametrize("folder", ["an\tki", os.fsdecode(b"anki-\xff")],
                         ids=["tab", "not-utf8"])
def test_a_folder_name_the_vault_refuses_is_refused_before_anything_is_written(tmp_path, capsys, folder):
    package = export(tmp_path)
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    common = ["--vault", str(vault), "--data-dir", str(data), "--now", NOW]
    capsys.readouterr()

    code = main(["import-history", "anki", str(package), "--folder", folder, *common])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err

    assert main(["due", "--json", *common]) == 0
    listed = json.loads(capsys.readouterr().out)
    entries = listed if isinstance(listed, list) else listed.get("notes", listed.get("entries", []))
    usable = [e for e in entries if isinstance(e, dict) and e.get("kind", "note") == "note"]
    written = [p for p in vault.rglob("*.md") if ".studyapp" not in p.parts]
    # either refused (exit 2, nothing written) or the two imported notes are notes of the vault
    assert (code == 2 and not written) or len(usable) == 2, (
        f"exit {code}: {out.strip()!r}; the vault lists {len(usable)} of the {len(written)} "
        f"notes written ({[p.relative_to(vault).as_posix() for p in written]})")
