"""Grade a file in THIS process: a trusted-only convenience for the kernels' own tests.

The app never uses it: learner code runs in the grader's sandboxed child (studyapp/grader/).
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
import traceback
from pathlib import Path

_counter = itertools.count()


def _error(exc: BaseException) -> dict:
    return {"type": type(exc).__name__, "message": str(exc)[:500],
            "traceback": "".join(traceback.format_exception(exc))[-2000:]}


def grade_in_process(drill_id: str, source_path, seed: int = 0, device: str = "cpu") -> dict:
    """Import `source_path`, run every case through the drill and return the judge's verdict."""
    from .registry import DRILLS

    drill = DRILLS[drill_id]
    path = Path(source_path)
    try:
        spec = importlib.util.spec_from_file_location(f"_submission_{next(_counter)}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses and pickling look the module up by name
        spec.loader.exec_module(module)
    except Exception as exc:
        error = _error(exc)
        return {"status": "error", "summary": f"could not import {path.name}: {error['type']}: {error['message']}",
                "mistake": "import_error", "hint": error["traceback"], "checks": []}
    entry = getattr(module, drill.entry, None)
    if entry is None:
        return {"status": "error", "summary": f"{path.name} defines no `{drill.entry}`",
                "mistake": "missing_entry", "hint": drill.statement, "checks": []}
    cases = drill.make_cases(seed, device)
    results = []
    for case in cases:
        try:
            results.append(drill.run_case(entry, case.payload))
        except Exception as exc:
            results.append({"error": _error(exc)})
    return drill.judge(cases, results, device)
