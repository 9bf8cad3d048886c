"""What each drill is, in words: ids, titles, tags, statements, hints, starter files.

Importable WITHOUT torch, so `studyapp drills` can list drills without paying torch's import.
A drill is one folder under `kernels/` (see `kernels/README.md`): its `drill.toml` and
`statement.md` are read here; its grading (`grade.py`, which imports torch) by `registry`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

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


def load_folder(folder: Path) -> DrillInfo:
    """Read one drill folder's `drill.toml` and `statement.md` into a `DrillInfo`."""
    try:
        meta = tomllib.loads((folder / METADATA).read_text(encoding="utf-8"))
        statement = (folder / "statement.md").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
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


def load_catalog(root: Path = KERNELS_DIR) -> dict[str, DrillInfo]:
    """Every drill folder under `root`, by id, in list order (`order`, then id)."""
    infos = [load_folder(folder) for folder in drill_folders(root)]
    return {info.id: info for info in sorted(infos, key=lambda info: (info.order, info.id))}


CATALOG: dict[str, DrillInfo] = load_catalog()
"""Every drill by id, in list order."""
