"""The one place that knows where studyapp's files live.

Data dir: `--data-dir`, else `$STUDYAPP_DATA_DIR`, else the platform's user data dir.
Vault: `--vault`, else `$STUDYAPP_VAULT`, else `vault` in the config file (a relative one is
relative to the data dir, where the config file is), else `<data dir>/vault` (seeded from the
bundled starter deck on first use).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

APP_NAME = "studyapp"
DATA_DIR_ENV = "STUDYAPP_DATA_DIR"
VAULT_ENV = "STUDYAPP_VAULT"


def _bundled(name: str) -> Path:
    """A folder shipped with the app: inside the wheel, or at the top of a source checkout."""
    package = Path(__file__).resolve().parent
    installed = package / "_bundled" / name
    return installed if installed.is_dir() else package.parent / name


def cards_dir() -> Path:
    """The bundled starter deck."""
    return _bundled("cards")


def kernels_dir() -> Path:
    """The bundled reference kernels and drill specs (loaded by the grader worker only)."""
    return _bundled("kernels")


def default_data_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


@dataclass(frozen=True)
class Paths:
    """Resolved locations for one run of the app."""

    data_dir: Path
    """Where the database, caches, config and drill workspace live."""
    vault_dir: Path
    """The folder tree of markdown notes."""
    vault_is_default: bool
    """True when no vault was configured: the vault is `<data dir>/vault`, seeded from `cards/`."""

    @property
    def config_file(self) -> Path:
        return self.data_dir / "config.toml"

    @property
    def database_file(self) -> Path:
        """Review history and scheduler state (SQLite)."""
        return self.data_dir / "studyapp.sqlite3"

    @property
    def cache_file(self) -> Path:
        """Parsed-metadata cache; safe to delete at any time."""
        return self.data_dir / "cache.sqlite3"

    @property
    def drill_memo_file(self) -> Path:
        """The drill folders' parsed `drill.toml` files, reused while unchanged; safe to delete."""
        return self.data_dir / "drill-catalog.cache"

    @property
    def today_snapshot_file(self) -> Path:
        """What the Today screen last showed, drawn at the next start before the vault loads."""
        return self.data_dir / "today.json"

    @property
    def backups_dir(self) -> Path:
        """Automatic and manual copies of the review database (`studyapp backup`)."""
        return self.data_dir / "backups"

    @property
    def data_dir_marker(self) -> Path:
        """This data dir's identity and the last healthy state of its database (JSON)."""
        return self.data_dir / "data-dir.json"

    @property
    def vault_marker(self) -> Path:
        """The vault's identity and the data dir that records its reviews (JSON), kept in the
        vault's own `.studyapp/` folder, which the vault loader skips as hidden."""
        return self.vault_dir / ".studyapp" / "vault.json"

    @property
    def writer_lock_file(self) -> Path:
        """Held while a review writes a note and the database (one writer at a time)."""
        return self.data_dir / "writer.lock"

    @property
    def workspace_dir(self) -> Path:
        """Where `studyapp start` writes drill starter files for the learner to edit."""
        return self.data_dir / "workspace"


def resolve_paths(
    vault: str | os.PathLike | None = None,
    data_dir: str | os.PathLike | None = None,
    environ: dict[str, str] | None = None,
) -> Paths:
    """Apply the precedence rules above; reads the config file only to find a configured vault."""
    env = os.environ if environ is None else environ
    data = _folder(data_dir or env.get(DATA_DIR_ENV) or default_data_dir(), "the data dir")
    chosen = vault or env.get(VAULT_ENV)
    if chosen:
        return Paths(data.resolve(), _folder(chosen, "the vault").resolve(), False)
    from studyapp.config import load_settings

    configured = load_settings(data / "config.toml").vault
    if configured:  # relative to the folder of config.toml, wherever the command runs
        where = _folder(configured, f"{data / 'config.toml'}: vault")
        return Paths(data.resolve(), (data / where).resolve(), False)
    return Paths(data.resolve(), (data / "vault").resolve(), True)


def _folder(text: str | os.PathLike, what: str) -> Path:
    """`text` as a path, `~` expanded; a usage error naming `what` when it cannot be one
    (`~nosuchuser/x`, a NUL byte) rather than a traceback."""
    from studyapp.errors import UsageError

    try:
        path = Path(text).expanduser()
        if "\0" in os.fspath(path):
            raise ValueError("it holds a NUL byte")
    except (RuntimeError, ValueError) as exc:  # expanduser: no such user; a NUL byte
        raise UsageError(f"{what} {os.fspath(text)!r} is not a usable folder path: {exc}") from None
    return path


def seed_default_vault(paths: Paths) -> bool:
    """Copy the starter deck into the default vault the first time it is needed.

    Returns True when it seeded. A configured vault is never touched, nor is an existing one.
    """
    if not paths.vault_is_default or paths.vault_dir.exists():
        return False
    import shutil  # only on first use: every command passes here, and shutil is slow to import

    paths.vault_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = paths.vault_dir.with_name(paths.vault_dir.name + ".seeding")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(cards_dir(), tmp, ignore=shutil.ignore_patterns("README*", ".*"))
    for folder, _dirs, files in os.walk(tmp):  # the deck may be installed read-only: the copy is the user's
        for path in [folder, *(os.path.join(folder, name) for name in files)]:
            os.chmod(path, os.stat(path).st_mode | 0o200)
    os.replace(tmp, paths.vault_dir)
    return True
