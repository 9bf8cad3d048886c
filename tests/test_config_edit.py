"""Saving one setting edits one line of config.toml and leaves every other byte alone."""

from __future__ import annotations

import os

import pytest

from studyapp.config import ConfigError, load_settings
from studyapp.config_edit import set_setting


def test_a_missing_file_gets_just_that_line(tmp_path):
    config = tmp_path / "data" / "config.toml"
    set_setting(config, "theme", "nord")
    assert config.read_bytes() == b'theme = "nord"\n'
    assert load_settings(config).theme == "nord"


def test_the_existing_line_changes_and_its_comment_and_neighbours_stay(tmp_path):
    config = tmp_path / "config.toml"
    before = ("# my settings\r\nnew_per_day = 15\r\n\r\n  theme = 'gruvbox'   # dark, easy on the eyes\r\n"
              "desired_retention = 0.85\r\n")
    config.write_bytes(before.encode())
    os.chmod(config, 0o640)
    set_setting(config, "theme", "nord")
    assert config.read_bytes() == before.replace("'gruvbox'", '"nord"').encode()
    assert os.stat(config).st_mode & 0o777 == 0o640
    settings = load_settings(config)
    assert (settings.theme, settings.new_per_day, settings.desired_retention) == ("nord", 15, 0.85)


def test_a_file_without_the_key_gets_it_appended(tmp_path):
    config = tmp_path / "config.toml"
    config.write_bytes("\ufeff# 每天少一点\nnew_per_day = 5".encode())
    set_setting(config, "theme", "textual-light")
    assert config.read_bytes() == "\ufeff# 每天少一点\nnew_per_day = 5\ntheme = \"textual-light\"\n".encode()
    assert load_settings(config).theme == "textual-light"


def test_a_broken_file_is_reported_and_left_untouched(tmp_path):
    config = tmp_path / "config.toml"
    config.write_bytes(b"theme = 'nord\nnew_per_day = 5\n")
    with pytest.raises(ConfigError):
        set_setting(config, "theme", "dracula")
    assert config.read_bytes() == b"theme = 'nord\nnew_per_day = 5\n"


def test_a_value_spread_over_lines_is_not_guessed_at(tmp_path):
    config = tmp_path / "config.toml"
    text = b'theme = """\nnord"""\n'
    config.write_bytes(text)
    with pytest.raises(ConfigError):
        set_setting(config, "theme", "dracula")
    assert config.read_bytes() == text
