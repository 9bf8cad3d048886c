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


def _load_entry(drill, path: Path):
    """(the learner's entry point, None) or (None, an error verdict)."""
    try:
        spec = importlib.util.spec_from_file_location(f"_submission_{next(_counter)}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses and pickling look the module up by name
        spec.loader.exec_module(module)
    except Exception as exc:
        error = _error(exc)
        return None, {"status": "error", "summary": f"could not import {path.name}: {error['type']}: {error['message']}",
                      "mistake": "import_error", "hint": error["traceback"], "checks": []}
    entry = getattr(module, drill.entry, None)
    if entry is None:
        return None, {"status": "error", "summary": f"{path.name} defines no `{drill.entry}`",
                      "mistake": "missing_entry", "hint": drill.statement, "checks": []}
    return entry, None


def _run(drill, entry, cases) -> list[dict]:
    results = []
    for case in cases:
        try:
            results.append(drill.run_case(entry, case.payload))
        except Exception as exc:
            results.append({"error": _error(exc)})
    return results


def grade_in_process(drill_id: str, source_path, seed: int = 0, device: str = "cpu") -> dict:
    """Import `source_path`, run every case through the drill and return the judge's verdict."""
    return grade_in_process_seeds(drill_id, source_path, (seed,), device)[0]


def grade_in_process_seeds(drill_id: str, source_path, seeds=(0,), device: str = "cpu") -> list[dict]:
    """One verdict per seed, as `grade_in_process` gives them, running the public cases once.

    The public cases are the same for every seed, so a bank can check twenty seeds for the
    price of one run of them plus twenty runs of the few fresh cases.
    """
    import torch

    from .registry import DRILLS

    drill = DRILLS[drill_id]
    entry, failed = _load_entry(drill, Path(source_path))
    if failed:
        return [dict(failed, seed=seed) for seed in seeds]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # like the grader's worker: small ops on a busy machine run 10x faster
    try:
        public = [case for case in drill.make_cases(seeds[0], device, keep_fresh=True) if case.public]
        public_results = _run(drill, entry, public)
        verdicts = []
        for seed in seeds:
            fresh = [case for case in drill.make_cases(seed, device, keep_fresh=True) if not case.public]
            verdict = drill.judge(public + fresh, public_results + _run(drill, entry, fresh), device)
            verdicts.append(dict(verdict, seed=seed))
    finally:
        torch.set_num_threads(threads)
    return verdicts
