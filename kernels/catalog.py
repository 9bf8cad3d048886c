"""What each drill is, in words: ids, titles, tags, statements, hints, starter files.

Importable WITHOUT torch, so `studyapp drills` can list drills without paying torch's import.
A drill is one folder under `kernels/` (see `kernels/README.md`): its `drill.toml` and
`statement.md` are read here; its grading (`grade.py`, which imports torch) by `registry`.
"""

from __future__ import annotations

import marshal
import os
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path

KERNELS_DIR = Path(__file__).resolve().parent
METADATA = "drill.toml"


@dataclass(frozen=True)
class PairingTerm:
    """A clue that a note is about this drill (see `studyapp.pairing`)."""

    label: str
    weight: float
    regex: str | None = None
    """None: the label itself, matched as a whole word."""
    needles: tuple[str, ...] = ()
    """With `regex`: lower-case strings one of which every match contains."""


@dataclass(frozen=True)
class DrillInfo:
    """The learner-facing description of one drill."""

    id: str
    """Stable id used by the CLI (`studyapp start sdpa`) and stored with attempts."""
    title: str
    tags: tuple[str, ...]
    """Concepts the drill trains, matching tags in the users' notes."""
    entry: str
    """Name of the function or class the learner's file must define."""
    statement: str
    """Markdown shown in the CLI/TUI: the contract in the learner's terms."""
    hints: tuple[str, ...]
    """Progressive hints: the idea (why) first, then the API, then the code."""
    folder: Path | None = None
    """The drill's folder (`kernels/<id>/`); None only for drills built in code (tests' fakes)."""
    terms: tuple[PairingTerm, ...] = ()
    mistakes: dict[str, str] = field(default_factory=dict)
    """Known mistake id -> what it is, in plain words."""
    fused_allowed: bool = True
    """Whether fused library calls (F.scaled_dot_product_attention...) may do the work."""
    order: int = 100
    """Position in lists (smaller first)."""

    @property
    def starter_path(self) -> Path:
        """The file `studyapp start` copies: its docstring states the contract."""
        if self.folder is None:
            raise DrillFolderError(f"drill {self.id} has no folder, hence no starter")
        return self.folder / "starter.py"

    @property
    def reference_path(self) -> Path | None:
        """A correct solution, shown only after a pass or an explicit give-up."""
        return self.folder / "reference.py" if self.folder is not None else None


class DrillFolderError(ValueError):
    """A drill folder whose metadata is missing or malformed (a bug in the bundled drills)."""


def _tomllib():
    """The TOML parser, imported only when a `drill.toml` must be parsed (see `ParsedMemo`)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    return tomllib


def load_folder(folder: Path, memo: ParsedMemo | None = None) -> DrillInfo:
    """Read one drill folder's `drill.toml` and `statement.md` into a `DrillInfo` (the TOML's
    parse from `memo` when it has seen these very bytes)."""
    try:
        raw = (folder / METADATA).read_bytes()
        meta = memo.get(folder.name, raw) if memo is not None else None
        if meta is None:
            meta = _tomllib().loads(raw.decode("utf-8"))  # its TOMLDecodeError is a ValueError
            if memo is not None:
                memo.put(folder.name, raw, meta)
        statement = (folder / "statement.md").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DrillFolderError(f"drill folder {folder.name}: {exc}") from exc
    if meta.get("id") != folder.name:
        raise DrillFolderError(f"drill folder {folder.name}: id {meta.get('id')!r} differs from the folder name")
    try:
        terms = tuple(_pairing_term(t) for t in meta.get("terms", ()))
        return DrillInfo(
            id=meta["id"], title=meta["title"], tags=tuple(meta["tags"]), entry=meta["entry"],
            statement=statement, hints=tuple(meta["hints"]), folder=folder, terms=terms,
            mistakes=dict(meta.get("mistakes", {})), fused_allowed=bool(meta.get("fused_allowed", True)),
            order=int(meta.get("order", 100)),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise DrillFolderError(f"drill folder {folder.name}: bad or missing field {exc}") from exc


def _pairing_term(table: dict) -> PairingTerm:
    """A `[[terms]]` entry; a regex must name the needles its every match contains. (Whether
    it compiles is the dev check's business: compiling sixty regexes costs every command.)"""
    regex, needles = table.get("regex"), tuple(str(n) for n in table.get("needles", ()))
    if regex is not None:
        if not needles or any(n != n.lower() for n in needles):
            raise ValueError(f"term {table.get('label')!r}: a regex needs lower-case needles")
    return PairingTerm(str(table["label"]), float(table["weight"]), regex, needles)


def drill_folders(root: Path = KERNELS_DIR) -> list[Path]:
    """Every folder under `root` holding a `drill.toml`, by name."""
    return sorted(path.parent for path in root.glob(f"*/{METADATA}"))


def load_catalog(root: Path = KERNELS_DIR, memo_file: Path | None = None) -> dict[str, DrillInfo]:
    """Every drill folder under `root`, by id, in list order (`order`, then id). With
    `memo_file`, the TOML parses are kept there and reused for unchanged files (`ParsedMemo`)."""
    memo = ParsedMemo(memo_file) if memo_file is not None else None
    infos = [load_folder(folder, memo) for folder in drill_folders(root)]
    if memo is not None:
        memo.save()
    return {info.id: info for info in sorted(infos, key=lambda info: (info.order, info.id))}


class ParsedMemo:
    """The parsed `drill.toml` of each folder, kept in a file between runs with the CRC-32 and
    length of the bytes it was parsed from, so an edited file is parsed again and nothing else
    decides. Parsing the dozen files is most of listing the drills (about 7 ms of a warm `due`,
    and the parser's import); reading them to check costs a fraction of a millisecond. A memo
    that cannot be read is ignored, one that cannot be written is not kept: it only saves time."""

    FORMAT = 2

    def __init__(self, file: Path):
        self.file = file
        self.entries: dict[str, tuple[int, int, dict]] = {}
        """Folder name -> (CRC-32, length, parsed TOML) of its `drill.toml`."""
        self.changed = False
        try:
            stored = marshal.loads(file.read_bytes())
            if type(stored) is tuple and len(stored) == 2 and stored[0] == self.FORMAT and type(stored[1]) is dict:
                self.entries = stored[1]
        except (OSError, ValueError, EOFError, TypeError):
            pass

    def get(self, name: str, raw: bytes) -> dict | None:
        entry = self.entries.get(name)
        if type(entry) is tuple and len(entry) == 3 and entry[:2] == (zlib.crc32(raw), len(raw)):
            return entry[2] if type(entry[2]) is dict else None
        return None

    def put(self, name: str, raw: bytes, meta: dict) -> None:
        self.entries[name] = (zlib.crc32(raw), len(raw), meta)
        self.changed = True

    def save(self) -> None:
        if not self.changed:
            return
        try:
            data = marshal.dumps((self.FORMAT, self.entries))
        except ValueError:  # a value marshal cannot hold (a TOML date): parse each time
            return
        temp = self.file.with_name(f".{self.file.name}.{os.getpid()}.tmp")
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            temp.write_bytes(data)
            os.replace(temp, self.file)  # whole or not at all, whoever reads it meanwhile
        except OSError:
            try:
                temp.unlink()
            except OSError:
                pass


def __getattr__(name: str):
    """`CATALOG`: every drill by id, in list order, parsed on first use (PEP 562), so that a
    caller with a memo of the parses (`load_catalog(memo_file=...)`) never parses them."""
    if name != "CATALOG":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    catalog = globals()["CATALOG"] = load_catalog()
    return catalog
