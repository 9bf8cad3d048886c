"""Typed settings read from `config.toml` in the data dir; every key is optional."""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass, field, fields
from pathlib import Path

HISTORY_LOG_PLACES = ("vault", "data-dir")
THEMES = ("textual-dark", "textual-light", "nord", "gruvbox", "catppuccin-mocha", "dracula",
          "tokyo-night", "monokai", "flexoki", "catppuccin-latte", "catppuccin-frappe",
          "catppuccin-macchiato", "solarized-light", "solarized-dark", "rose-pine", "rose-pine-moon",
          "rose-pine-dawn", "atom-one-dark", "atom-one-light", "ansi-dark", "ansi-light")
"""The TUI's themes (Textual's built-in ones; a test checks them against Textual), named here so
that checking `theme` does not import Textual into every command."""


class ConfigError(ValueError):
    """The config file exists but cannot be used; the message says where and why."""


@dataclass
class Settings:
    """What a user can configure. Defaults follow Anki's where Anki has one."""

    vault: str | None = None
    """Folder of the notes vault; unset means the default vault in the data dir."""
    desired_retention: float = 0.9
    """Probability of recall FSRS aims for at each review."""
    maximum_interval: int = 36500
    """Longest interval FSRS may schedule, in days."""
    learning_steps_minutes: list[float] = field(default_factory=lambda: [1.0, 10.0])
    """Steps of a new card before it graduates (an "again" returns it within the session)."""
    relearning_steps_minutes: list[float] = field(default_factory=lambda: [10.0])
    """Steps of a lapsed card before it returns to review."""
    new_per_day: int = 20
    """New notes introduced per day."""
    reviews_per_day: int = 200
    """Reviews shown per day."""
    new_drills_per_day: int = 2
    """New coding drills introduced per day (a drill is introduced once a note paired with it
    has been reviewed); due drills follow the day's note reviews."""
    grader_timeout: float = 10.0
    """Seconds a learner's submission may run before it is stopped."""
    grader_memory_mb: int = 2048
    """Memory a submission may allocate, in MiB, beyond what the grader itself already uses."""
    theme: str = "textual-dark"
    """Textual theme of the TUI."""
    history_log: str = "vault"
    """Where this device's review log lives: "vault" (`<vault>/.studyapp/log`, synced with the
    notes) or "data-dir" (`<data dir>/log`, kept on this machine)."""


RANGES: dict[str, tuple[float, float, str]] = {
    "desired_retention": (0.7, 0.99, "from 0.7 to 0.99 (Anki's range)"),
    "maximum_interval": (1, 36500, "from 1 to 36500 days"),
    "learning_steps_minutes": (1e-3, 525_600, "a list of minutes, each from 0.001 to 525600 (a year)"),
    "relearning_steps_minutes": (1e-3, 525_600, "a list of minutes, each from 0.001 to 525600 (a year)"),
    "new_per_day": (0, 10**6, "a whole number from 0 to 1000000"),
    "reviews_per_day": (0, 10**6, "a whole number from 0 to 1000000"),
    "new_drills_per_day": (0, 10**6, "a whole number from 0 to 1000000"),
    "grader_timeout": (0.1, 3600, "from 0.1 to 3600 seconds"),
    "grader_memory_mb": (64, 1 << 20, "from 64 to 1048576 MiB"),
}
"""Each number's allowed values (a list's items each): outside them FSRS divides by zero, a day
shows a negative number of cards, or a review is due in the year 9999; the message says so
before anything runs."""


def load_settings(config_file: Path) -> Settings:
    """Read settings; a missing file means defaults, a broken one raises ConfigError."""
    try:
        raw = _read_regular_file(config_file)
    except FileNotFoundError:
        if os.path.islink(config_file):  # a link whose file is gone: not "no settings"
            raise ConfigError(f"{config_file}: is a symbolic link to {os.readlink(config_file)}, which does "
                              "not exist; restore that file or remove the link") from None
        return Settings()
    except OSError as exc:
        raise ConfigError(f"{config_file}: cannot be read: {exc.strerror or exc}; "
                          "check that it is a file readable by you") from exc
    if sys.version_info >= (3, 11):  # imported here: most runs have no config file to parse
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        data = tomllib.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{config_file}: {exc}") from exc
    except RecursionError:  # arrays in arrays thousands deep: no setting is written so
        raise ConfigError(f"{config_file}: a value is nested too deeply to be a setting") from None
    known = {f.name: f for f in fields(Settings)}
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise ConfigError(f"{config_file}: unknown setting(s): {', '.join(unknown)}")
    settings = Settings()
    for key, value in data.items():
        default = getattr(settings, key)
        expected = type(default) if default is not None else str
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, expected) or isinstance(value, bool) != isinstance(default, bool):
            raise ConfigError(
                f"{config_file}: {key} must be {expected.__name__}, got {value!r}"
            )
        setattr(settings, key, value)
    for key, (low, high, words) in RANGES.items():
        value = getattr(settings, key)
        values = value if isinstance(value, list) else [value]
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and low <= v <= high for v in values):
            raise ConfigError(f"{config_file}: {key} must be {words}, got {value!r}")
    if settings.history_log not in HISTORY_LOG_PLACES:
        raise ConfigError(f"{config_file}: history_log must be one of "
                          f"{', '.join(HISTORY_LOG_PLACES)}, got {settings.history_log!r}")
    return settings


def setting_warnings(settings: Settings, config_file: Path) -> list[str]:
    """Lines about settings that cannot be used but need not stop a command: an unknown theme
    only changes how the TUI looks, which falls back to its default."""
    if settings.theme in THEMES:
        return []
    return [f"{config_file}: theme {settings.theme!r} is not a theme, so the TUI uses "
            f"{Settings.theme}; choose one of: {', '.join(THEMES)}"]


_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"))


def _read_regular_file(config_file: Path) -> bytes:
    """The file's bytes, refused unless it is a regular file: it is opened without blocking and
    checked before reading, since reading a FIFO would hang every command."""
    fd = os.open(config_file, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = next((name for test, name in _KINDS if test(mode)), "something else")
        raise ConfigError(f"{config_file}: not a regular file ({kind}); settings belong in a "
                          "plain TOML file")
    with open(fd, "rb") as handle:
        return handle.read()


def setting_docs() -> dict[str, str]:
    """Each setting's docstring, read from this module's source (the one place they live)."""
    import ast
    from itertools import pairwise

    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    body = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "Settings").body
    docs = {}
    for node, after in pairwise(body):
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)):
            docs[node.target.id] = " ".join(str(after.value.value).split())
    return docs


def _toml_value(value) -> str:
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return repr(value)


def default_config_text() -> str:
    """config.toml as first written: every setting, commented out at its default, explained."""
    import textwrap

    docs = setting_docs()
    lines = ["# studyapp settings. Each setting below is commented out and shows its default:",
             "# remove the leading '# ' of its line and change the value to use your own.", ""]
    for item in fields(Settings):
        default = getattr(Settings(), item.name)
        lines += textwrap.wrap(docs.get(item.name, item.name), width=94,
                               initial_indent="# ", subsequent_indent="# ")
        example = '"/path/to/your/notes"' if default is None else _toml_value(default)
        lines += [f"# {item.name} = {example}", ""]
    return "\n".join(lines)


def write_default_config(config_file: Path) -> bool:
    """Write the commented template when there is no config file yet (first run); never
    replaces a file, even one that appears meanwhile. Returns True when it wrote."""
    if config_file.exists():
        return False
    try:
        config_file.parent.mkdir(parents=True, exist_ok=True)
        temp = config_file.with_name(f".{config_file.name}.{os.getpid()}.tmp")
        temp.write_text(default_config_text(), encoding="utf-8")
        try:
            os.link(temp, config_file)
        except FileExistsError:
            return False
        finally:
            temp.unlink()
    except OSError:
        return False  # a read-only data dir runs on defaults
    return True
