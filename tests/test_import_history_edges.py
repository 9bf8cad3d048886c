"""`import-history osr` and `import-history anki` at the edges: values other tools write at
the ends of the calendar, names longer than a file system takes, oversized members, odd
folders. Each odd item is one line and is left out; the rest imports; every line written to the
log is one its reader accepts, so running the import again adds nothing."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest
import zstandard
from history_helpers import card_states
from test_anki_import import collection_bytes

from studyapp.cli import main
from studyapp.history import anki
from studyapp.history.events import Event

NOW = "2026-06-01T10:00"
T0 = 1_767_254_400_000  # 2026-01-01T08:00Z, epoch ms


def run(capsys, vault: Path, data: Path, *args: str) -> tuple[int, str, str]:
    """One command in-process: exit code, stdout, and stderr without the first-run notes."""
    capsys.readouterr()
    code = main([*args, "--vault", str(vault), "--data-dir", str(data), "--now", NOW])
    out, err = capsys.readouterr()
    err = "\n".join(line for line in err.splitlines() if not line.startswith("studyapp: note:"))
    assert "Traceback" not in out + err
    return code, out, err


def log_lines(vault: Path) -> list[dict]:
    """Every line of the vault's review log; each must be an event the reader accepts."""
    lines = [json.loads(line) for path in sorted((vault / ".studyapp" / "log").glob("*.jsonl"))
             for line in path.read_text().splitlines() if line.strip()]
    for line in lines:
        Event.from_json(line)  # BadEvent: the reader would drop it
    return lines


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


# -- osr ------------------------------------------------------------------------------------------

GOOD = "---\nsr-due: 2026-01-05\nsr-interval: 12\nsr-ease: 250\n---\n# ok\nbody\n"


def test_a_note_with_its_own_review_history_keeps_its_next_review(tmp_path, capsys):
    vault, data = tmp_path / "vault", tmp_path / "data"
    (vault / "t").mkdir(parents=True)
    (vault / "t" / "a.md").write_text(
        "---\ncreated: 2024-01-01\nlast_reviewed: 2025-12-01\nnext_review: 2026-03-01\n"
        "review_count: 3\ndifficulty: medium\nmastery_level: 0.5\n---\n# A\n\n"
        "answer <!--SR:!2026-01-05,12,250-->\n")
    (vault / "t" / "b.md").write_text(GOOD)
    (vault / "t" / "c.md").write_text(  # left alone: its odd OSR values do not matter
        "---\nlast_reviewed: 2025-12-01\nnext_review: 2026-03-01\n---\n# C\n\n"
        "<!--SR:!9999-12-31,12,250-->\n")
    code, out, err = run(capsys, vault, data, "import-history", "osr")
    assert code == 0 and not err, err
    assert "imported 1 note" in out and "2 already scheduled by studyapp" in out
    assert [line["note"] for line in log_lines(vault)] == ["t/b.md"]
    assert not {"t/a.md", "t/c.md"} & set(card_states(data))


ODD = {
    "due in year 1": "# a\nbody <!--SR:!0001-01-01,12,250-->",
    "due 9999-12-31": "# a\nbody <!--SR:!9999-12-31,12,250-->",
    "due 8999-01-01": "# a\nbody <!--SR:!8999-01-01,12,250-->",
    "due 1970-01-02": "# a\nbody <!--SR:!1970-01-02,12,250-->",
    "20-digit interval": "# a\nbody <!--SR:!2026-01-05,12345678901234567890,250-->",
    "ease .inf": "---\nsr-due: 2026-01-05\nsr-interval: 12\nsr-ease: .inf\n---\n# a",
    "ease .nan": "---\nsr-due: 2026-01-05\nsr-interval: 12\nsr-ease: .nan\n---\n# a",
    "ease 0": "---\nsr-due: 2026-01-05\nsr-interval: 12\nsr-ease: 0\n---\n# a",
    "interval 100000000": "---\nsr-due: 2026-01-05\nsr-interval: 100000000\nsr-ease: 250\n---\n# a",
    "interval .inf": "---\nsr-due: 2026-01-05\nsr-interval: .inf\nsr-ease: 250\n---\n# a",
    "interval -3": "---\nsr-due: 2026-01-05\nsr-interval: -3\nsr-ease: 250\n---\n# a",
    "front matter due 0001-01-01":
        "---\nsr-due: 0001-01-01\nsr-interval: 12\nsr-ease: 250\n---\n# a",
    "no interval": "---\nsr-due: 2026-01-05\nsr-ease: 250\n---\n# a",
}


@pytest.mark.parametrize("odd", list(ODD.values()), ids=list(ODD))
def test_odd_osr_values_are_one_line_each_and_the_rest_imports(tmp_path, capsys, odd):
    vault, data = tmp_path / "vault", tmp_path / "data"
    (vault / "o").mkdir(parents=True)
    (vault / "o" / "good.md").write_text(GOOD)
    (vault / "o" / "odd.md").write_text(odd + "\n")

    code, out, err = run(capsys, vault, data, "import-history", "osr", "--dry-run")
    assert code == 0, err
    assert "would import 1 note" in out and "1 with OSR values studyapp cannot use" in out
    assert [line for line in err.splitlines() if "o/odd.md" in line] == err.splitlines(), err
    assert len(err.splitlines()) == 1
    assert not (vault / ".studyapp" / "log").exists() or not log_lines(vault)

    code, out, err = run(capsys, vault, data, "import-history", "osr")
    assert code == 0, err
    assert "imported 1 note" in out and len(err.splitlines()) == 1 and "o/odd.md" in err
    assert [line["note"] for line in log_lines(vault)] == ["o/good.md"]

    code, out, err = run(capsys, vault, data, "import-history", "osr")
    assert code == 0 and "imported 0 notes; 1 already imported" in out
    assert len(log_lines(vault)) == 1


def test_a_note_the_load_cannot_read_is_named_not_silently_left_out(tmp_path, capsys):
    """A note whose block is broken holds an OSR schedule that cannot be imported: the import
    said nothing of it, so the learner believed every schedule came over."""
    vault, data = tmp_path / "vault", tmp_path / "data"
    (vault / "o").mkdir(parents=True)
    (vault / "o" / "good.md").write_text(GOOD)
    (vault / "o" / "broken.md").write_text("---\nsr-due: 2026-01-05\nsr-interval: [12\n---\n# b\n")
    code, out, err = run(capsys, vault, data, "import-history", "osr")
    assert code == 0, err
    assert "imported 1 note" in out and "1 note could not be read" in out, out
    (line,) = err.splitlines()
    assert "o/broken.md" in line and "not read" in line, err
    assert [line["note"] for line in log_lines(vault)] == ["o/good.md"]


# -- anki: review times ---------------------------------------------------------------------------

NOTES = [(T0 - 1, "g1", "", "Front one\x1fback one"), (T0 - 2, "g2", "", "Front two\x1fback two")]
CARDS = [(10, T0 - 1, 0), (20, T0 - 2, 0)]


def apkg(tmp_path: Path, name: str, notes=NOTES, cards=CARDS, revlog=(), media=None,
         members=None, collection: bytes | None = None,
         collection_name: str = "collection.anki2") -> Path:
    """An export built here: the collection, the media list and the members named."""
    path = tmp_path / name
    if collection is None:
        collection = collection_bytes(tmp_path, notes=notes, cards=cards, revlog=list(revlog))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(collection_name, collection)
        archive.writestr("media", json.dumps(media or {}))
        for member, content in (members or {}).items():
            archive.writestr(member, content)
    return path


@pytest.mark.parametrize("odd_id", [2**62, 253_402_214_400_005, 220_000_000_000_000, -5],
                         ids=["2^62", "year 9999", "year 8941", "negative"])
def test_anki_reviews_outside_the_calendar_are_left_out_and_counted(tmp_path, capsys, odd_id):
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    package = apkg(tmp_path, "range.apkg", revlog=[(T0, 10, 3, 1000, 1), (odd_id, 10, 3, 1000, 1),
                                                    (T0 + 5, 20, 4, 1000, 1)])
    code, out, err = run(capsys, vault, data, "import-history", "anki", str(package), "--dry-run")
    assert code == 0, err
    assert "would import 2 notes, 2 reviews" in out
    assert "1 review with a time outside 1970 to 8900 left out" in out

    code, out, err = run(capsys, vault, data, "import-history", "anki", str(package))
    assert code == 0, err
    assert "imported 2 notes, 2 reviews" in out
    assert "1 review with a time outside 1970 to 8900 left out" in out
    assert len(log_lines(vault)) == 2

    before = snapshot(vault)
    code, out, err = run(capsys, vault, data, "import-history", "anki", str(package))
    assert code == 0 and "imported 0 notes, 0 reviews and 0 media files" in out
    assert snapshot(vault) == before


def test_anki_rows_of_other_types_are_no_crash(tmp_path, capsys):
    """Null fields, tags and guid, and a note made before 1970: no traceback, the note in the
    usual format, and a second import finds it again."""
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    package = apkg(tmp_path, "nulls.apkg",
                   notes=[(T0, None, None, None), (-3 * 86_400_000, "gneg", "", "neg\x1fb")],
                   cards=[(10, T0, 0), (20, -3 * 86_400_000, 0)])
    code, out, err = run(capsys, vault, data, "import-history", "anki", str(package))
    assert code == 0, err
    assert "imported 2 notes" in out
    assert "created: '1969" not in (vault / "anki" / "neg.md").read_text()
    code, out, err = run(capsys, vault, data, "import-history", "anki", str(package))
    assert code == 0 and "imported 0 notes" in out and "2 note(s)" in out


# -- anki: file names -----------------------------------------------------------------------------

CJK = ("请解释缩放点积注意力为什么要除以根号下键向量的维度，如果不除会出现什么问题，以及在混合精度"
       "训练时这个缩放对数值稳定性有什么影响？请结合归一化指数函数的梯度饱和现象加以说明")


@pytest.mark.parametrize("front", [CJK, "😀" * 80], ids=["cjk", "emoji"])
def test_a_long_non_ascii_front_is_written_under_a_name_that_fits(tmp_path, capsys, front):
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    package = apkg(tmp_path, "long.apkg",
                   notes=[(T0, "c1", "", front + "\x1fa"), (T0 + 1, "c2", "", front + "\x1fb")],
                   cards=[(10, T0, 0), (20, T0 + 1, 0)], revlog=[(T0 + 9, 10, 3, 5000, 1)])
    code, dry, err = run(capsys, vault, data, "import-history", "anki", str(package), "--dry-run")
    assert code == 0, err
    code, out, err = run(capsys, vault, data, "import-history", "anki", str(package))
    assert code == 0 and not err, err
    assert "imported 2 notes, 1 review" in out
    names = sorted(p.name for p in (vault / "anki").glob("*.md"))
    assert len(names) == 2
    assert dry.replace("would import", "imported") == out
    for name in names:
        # the temp file beside it, `.<name>.<8 hex>.studyapp-tmp`, must fit too
        assert len(f".{name}.12345678.studyapp-tmp".encode()) <= 255
        assert front.startswith(name.split(" (")[0].removesuffix(".md"))


# -- anki: media, sizes, the command line ---------------------------------------------------------

def test_media_on_the_front_stays_out_of_the_title_and_links_beside_the_note(tmp_path, capsys):
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    package = apkg(tmp_path, "img.apkg",
                   notes=[(T0, "gi", "", 'Front <img src="pic.png"> [sound:a.mp3]\x1fback')],
                   cards=[(10, T0, 0)], media={"0": "pic.png", "1": "a.mp3"},
                   members={"0": b"PNG", "1": b"MP3"})
    code, out, err = run(capsys, vault, data, "import-history", "anki", str(package))
    assert code == 0, err
    assert "anki/Front.md: new note" in out
    text = (vault / "anki" / "Front.md").read_text()
    assert "\n# Front\n" in text
    assert "![](attachments/pic.png)" in text and "[a.mp3](attachments/a.mp3)" in text
    assert "](/" not in text
    assert (vault / "anki" / "attachments" / "pic.png").read_bytes() == b"PNG"


def test_a_media_name_no_file_can_have_is_one_line_and_the_rest_imports(tmp_path, capsys):
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    package = apkg(tmp_path, "nul.apkg",
                   notes=[(T0, "gn", "", 'F <img src="a\x00b.png"> <img src="ok.png">\x1fb')],
                   cards=[(10, T0, 0)], media={"0": "a\x00b.png", "1": "ok.png"},
                   members={"0": b"X", "1": b"OK"})
    code, dry, _ = run(capsys, vault, data, "import-history", "anki", str(package), "--dry-run")
    assert code == 0 and "would import 1 note, 0 reviews and 1 media file" in dry
    code, out, err = run(capsys, vault, data, "import-history", "anki", str(package))
    assert code == 0, err
    assert "imported 1 note, 0 reviews and 1 media file" in out
    assert len(err.splitlines()) == 1 and "a\\x00b.png" in err, err
    assert (vault / "anki" / "attachments" / "ok.png").read_bytes() == b"OK"


def test_a_missing_export_is_a_usage_error(tmp_path, capsys):
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    code, out, err = run(capsys, vault, data, "import-history", "anki", str(tmp_path / "no.apkg"))
    assert code == 2 and len(err.splitlines()) == 1 and "no.apkg" in err


@pytest.mark.parametrize("folder", [".studyapp", "notes/.hidden", "../outside", "/tmp/x", ".",
                                    "link"])
def test_a_folder_hidden_or_outside_the_vault_is_refused(tmp_path, capsys, folder):
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (vault / "link").symlink_to(tmp_path / "elsewhere")
    package = apkg(tmp_path, "deck.apkg")
    before = snapshot(vault)
    code, out, err = run(capsys, vault, data, "import-history", "anki", str(package),
                         "--folder", folder)
    assert code == 2 and len(err.splitlines()) == 1 and "--folder" in err, (out, err)
    assert snapshot(vault) == before and not any((tmp_path / "elsewhere").iterdir())


def test_an_absolute_folder_inside_the_vault_is_taken(tmp_path, capsys):
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    package = apkg(tmp_path, "deck.apkg")
    code, out, err = run(capsys, vault, data, "import-history", "anki", str(package),
                         "--folder", str(vault / "cards"))
    assert code == 0, err
    assert "cards/Front one.md: new note" in out and (vault / "cards" / "Front one.md").is_file()


def test_a_collection_over_the_limit_is_refused_while_it_is_read(tmp_path, capsys, monkeypatch):
    """A zstd collection is small in the zip and large once decompressed: reading stops at
    the limit instead of filling memory and the disk."""
    monkeypatch.setattr(anki, "MAX_COLLECTION_BYTES", 1 << 20)
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    bomb = zstandard.ZstdCompressor().compress(b"\0" * (3 << 20))
    for name, package in (
            ("zstd", apkg(tmp_path, "z.colpkg", collection=bomb,
                          collection_name="collection.anki21b")),
            ("plain", apkg(tmp_path, "p.apkg", collection=b"\0" * (3 << 20)))):
        code, out, err = run(capsys, vault, data, "import-history", "anki", str(package))
        assert code == 1 and len(err.splitlines()) == 1, (name, err)
        assert "larger than" in err and "1 MiB" in err, err
    assert not any(p.is_file() for p in vault.rglob("*")) or not (vault / "anki").exists()


def test_a_media_file_over_the_limit_is_left_out_with_a_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(anki, "MAX_MEDIA_BYTES", 1 << 20)
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    zstd = zstandard.ZstdCompressor()
    package = apkg(tmp_path, "media.apkg",
                   notes=[(T0, "gm", "", '<img src="big.png"><img src="zbig.png">'
                                         '<img src="ok.png">F\x1fb')],
                   cards=[(10, T0, 0)], media={"0": "big.png", "1": "zbig.png", "2": "ok.png"},
                   members={"0": b"\0" * (2 << 20), "1": zstd.compress(b"\0" * (2 << 20)),
                            "2": b"OK"})
    code, out, err = run(capsys, vault, data, "import-history", "anki", str(package))
    assert code == 0, err
    assert "imported 1 note, 0 reviews and 1 media file" in out
    assert len(err.splitlines()) == 2 and "big.png" in err and "zbig.png" in err, err
    assert sorted(os.listdir(vault / "anki" / "attachments")) == ["ok.png"]
