"""First run writes a commented config.toml listing every setting at its default; the theme
edit from the palette still changes just its line."""

from __future__ import annotations

from dataclasses import fields

import tomllib

from studyapp.config import Settings, load_settings
from studyapp.config_edit import set_setting
from studyapp.context import build_context


def test_first_run_writes_every_setting_commented_at_its_default(tmp_path):
    ctx = build_context(vault=str(tmp_path / "vault"), data_dir=str(tmp_path / "data"))
    text = ctx.paths.config_file.read_text(encoding="utf-8")
    assert tomllib.loads(text) == {}, "every setting is commented out"
    assert load_settings(ctx.paths.config_file) == Settings()
    for item in fields(Settings):
        line = next(line for line in text.splitlines() if line.startswith(f"# {item.name} = "))
        value = line.removeprefix("# ")
        if item.name != "vault":
            assert tomllib.loads(value) == {item.name: getattr(Settings(), item.name)}
    assert "Probability of recall" in text  # each setting says what it does


def test_an_existing_config_is_never_replaced(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text("new_per_day = 3\n", encoding="utf-8")
    build_context(vault=str(tmp_path / "vault"), data_dir=str(data))
    assert (data / "config.toml").read_text(encoding="utf-8") == "new_per_day = 3\n"


def test_the_theme_edit_uncomments_its_own_line(tmp_path):
    ctx = build_context(vault=str(tmp_path / "vault"), data_dir=str(tmp_path / "data"))
    before = ctx.paths.config_file.read_text(encoding="utf-8")
    set_setting(ctx.paths.config_file, "theme", "nord")
    after = ctx.paths.config_file.read_text(encoding="utf-8")
    assert after == before.replace('# theme = "textual-dark"', 'theme = "nord"')
    assert load_settings(ctx.paths.config_file).theme == "nord"
