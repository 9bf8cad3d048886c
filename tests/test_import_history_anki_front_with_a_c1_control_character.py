"""An Anki note whose front holds a C1 control character (U+0080-U+009F: what a Windows-1252
quote such as 0x92 becomes when a deck was once read as Latin-1, common in old shared decks):
`import-history anki` names the file after the front with the character kept
(`anki/Don\\x92t forget the mask.md`), says "new note" and "imported 2 notes", but the vault
refuses that file name ("file name holds control characters"), so the note is never due and
its replayed reviews belong to no note. The name of a file studyapp writes must be one the
vault accepts (the character dropped, as the C0 controls already are)."""

from __future__ import annotations

import json
import zipfile

from test_anki_import import collection_bytes

from studyapp.cli import main

NOW = "2026-06-01T10:00"
T0 = 1_767_254_400_000  # 2026-01-01T08:00Z, epoch ms
DAY = 86_400_000


def test_an_imported_note_whose_front_holds_a_c1_control_is_a_note_of_the_vault(tmp_path, capsys):
    notes = [(T0 - DAY, "g-mask", "ml", "Don\x92t forget the mask\x1fBlocked keys get -inf."),
             (T0 - DAY + 1, "g-kv", "", "KV cache\x1fKeep past keys and values.")]
    cards = [(100, notes[0][0], 0), (200, notes[1][0], 0)]
    revlog = [(T0, 100, 3, 4000, 0), (T0 + 2 * DAY, 100, 3, 4000, 1), (T0 + DAY, 200, 4, 2000, 0)]
    package = tmp_path / "deck.apkg"
    with zipfile.ZipFile(package, "w") as archive:
        archive.writestr("collection.anki2", collection_bytes(tmp_path, notes, cards, revlog))
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    common = ["--vault", str(vault), "--data-dir", str(data), "--now", NOW]

    assert main(["import-history", "anki", str(package), *common]) == 0
    out, err = capsys.readouterr()
    assert "imported 2 notes, 3 reviews" in out, out

    assert main(["due", "--json", *common]) == 0
    out, err = capsys.readouterr()
    listed = json.loads(out)
    entries = listed if isinstance(listed, list) else listed.get("notes", listed.get("entries", []))
    paths = sorted(e["path"] for e in entries if isinstance(e, dict) and "path" in e)
    written = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md")
                     if ".studyapp" not in p.parts)
    assert len(paths) == 2, (f"the vault lists {paths} of the notes written {written!r}; "
                             f"it says: {err.strip()}")
