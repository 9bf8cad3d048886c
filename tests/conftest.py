"""Shared fixtures: every test gets its own data dir and never touches the user's real one."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_data_dir(tmp_path_factory, monkeypatch):
    data = tmp_path_factory.mktemp("data")
    monkeypatch.setenv("STUDYAPP_DATA_DIR", str(data))
    monkeypatch.delenv("STUDYAPP_VAULT", raising=False)
    return data


def pytest_collection_modifyitems(config, items):
    """Tests marked `serial` (a real terminal, a GPU) all run in one xdist worker, one at a time."""
    for item in items:
        if item.get_closest_marker("serial") or item.get_closest_marker("gpu"):
            item.add_marker(pytest.mark.xdist_group("serial"))
