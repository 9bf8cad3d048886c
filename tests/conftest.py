"""Shared fixtures: every test gets its own data dir and never touches the user's real one."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_data_dir(tmp_path_factory, monkeypatch):
    data = tmp_path_factory.mktemp("data")
    monkeypatch.setenv("STUDYAPP_DATA_DIR", str(data))
    monkeypatch.delenv("STUDYAPP_VAULT", raising=False)
    return data
