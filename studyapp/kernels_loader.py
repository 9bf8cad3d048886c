"""Import the bundled `kernels/` folder under a private name.

Our reference kernels must never be importable as a top-level `kernels` package: that name
belongs to an unrelated project on PyPI, and either could shadow the other. They are loaded from
`paths.kernels_dir()` as `studyapp_kernels` instead (so `import studyapp_kernels.attention`
works once `load_kernels()` has run). Loading imports only the package's torch-free `__init__`
and catalog, so the CLI and the TUI call this to list drills; the grader worker goes on to the
torch-backed drills (`DRILLS`), which import on first access (tests/test_grader_imports.py).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from studyapp.paths import kernels_dir

PACKAGE_NAME = "studyapp_kernels"


def load_kernels(root: Path | None = None) -> ModuleType:
    """Return the kernels package, importing it on first use.

    `root` replaces the bundled folder; only the grader's own tests pass it (a fake drill).
    """
    loaded = sys.modules.get(PACKAGE_NAME)
    if loaded is not None:
        return loaded
    root = root or kernels_dir()
    spec = importlib.util.spec_from_file_location(
        PACKAGE_NAME, root / "__init__.py", submodule_search_locations=[str(root)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE_NAME] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[PACKAGE_NAME]
        raise
    return module


def drill_catalog(memo_file: Path | None = None) -> dict[str, Any]:
    """Drill id -> the drill's torch-free description (`kernels/catalog.py`'s `DrillInfo`), in
    list order; empty when the kernels folder has no catalog. The one reading of it that every
    front end and service uses (`drills.catalog`, `drill_reviews`). With `memo_file` (see
    `Paths.drill_memo_file`) unchanged `drill.toml` files are not parsed again."""
    load_kernels()
    try:
        from studyapp_kernels import catalog
    except ImportError:
        return {}
    if "CATALOG" not in vars(catalog) and memo_file is not None:
        catalog.CATALOG = catalog.load_catalog(catalog.KERNELS_DIR, memo_file)  # the same, once
    return dict(catalog.CATALOG)
