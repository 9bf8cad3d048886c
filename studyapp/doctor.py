"""`studyapp doctor`: the environment and every note that cannot be read, in one report."""

from __future__ import annotations

import platform
import subprocess
import sys

from studyapp.errors import ExitCode

_TORCH_PROBE = (
    "import torch; print(torch.__version__); "
    "print(torch.backends.cuda.is_built()); "
    "print(torch.cuda.is_available()); "
    "print(torch.cuda.get_device_name(0) if torch.cuda.is_available() else '')"
)
"""What the grader's worker asks to choose its device (`GraderWorker.cuda_available`)."""


def torch_report() -> str:
    """torch version, and where drills will be graded by default (the grader's "auto": CUDA
    when torch was built with it and a GPU answers); probed in a subprocess so this process
    never imports torch."""
    try:
        out = subprocess.run([sys.executable, "-c", _TORCH_PROBE], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"could not be checked ({exc})"
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["unknown error"])[-1]
        return f"not importable ({last})"
    version, built, cuda, device = (out.stdout.splitlines() + ["", "", "", ""])[:4]
    if built == "True" and cuda == "True":
        return f"{version}, CUDA available: drills are graded on CUDA ({device}); `studyapp grade --device cpu` uses the CPU"
    why = "CUDA not available" if built == "True" else "built without CUDA"
    return f"{version}, {why}: drills are graded on the CPU"


def sandbox_report() -> str:
    """Which walls the grader puts around learner code on this machine: the same probes the
    worker runs, including its switch to nobody tried for real (`limits.probe_drop`), so this
    says what every verdict will say, before any grade."""
    if not sys.platform.startswith("linux"):
        return "none on this platform: learner code runs with your permissions (Linux only)"
    from studyapp.grader.confine import probe
    from studyapp.grader.limits import probe_drop, unreadable_python_advice

    try:
        confinement, drop = probe_drop(probe())
    except OSError as exc:
        return f"could not be checked ({exc})"
    text = confinement.describe()
    if drop is not None and drop.switches and drop.unreadable:
        text += ("; note: a file that imports a module the grader has not loaded fails with a setup error, "
                 "since " + unreadable_python_advice(drop))
    return text


PROBE_FILE = "torch-probe.json"
"""In the data dir: the last `doctor --torch` finding, for the plain report to repeat."""


def installed_torch_version() -> str | None:
    """torch's version read from its `version.py`, without importing torch (or the slower
    `importlib.metadata`); None when torch is not installed."""
    import importlib.util
    import re
    from pathlib import Path

    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    try:
        text = (Path(spec.origin).parent / "version.py").read_text(encoding="utf-8")
    except OSError:
        return "unknown version"
    match = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)", text, re.MULTILINE)
    return match.group(1) if match else "unknown version"


def remembered_torch_report(paths) -> str:
    """torch's installed version (read, not imported) and the last probe's finding for that
    version and interpreter; probing itself takes seconds, so only `--torch` does it."""
    import json

    version = installed_torch_version()
    if version is None:
        return "not installed (the drill grader needs it)"
    try:
        last = json.loads((paths.data_dir / PROBE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        last = None
    if isinstance(last, dict) and last.get("torch") == version and last.get("python") == sys.executable:
        return f"{last['report']} (checked {last['checked']}; `studyapp doctor --torch` checks again)"
    return f"{version} installed; `studyapp doctor --torch` checks CUDA (takes a few seconds)"


def probe_torch(paths) -> str:
    """`torch_report`, remembered in the data dir for later plain reports."""
    import json
    from datetime import date

    from studyapp.atomic import atomic_write_bytes

    report = torch_report()
    record = {"torch": installed_torch_version(), "python": sys.executable, "report": report,
              "checked": date.today().isoformat()}
    try:
        paths.data_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(paths.data_dir / PROBE_FILE, json.dumps(record).encode("utf-8"))
    except OSError:
        pass  # a read-only data dir: the next plain report just does not remember it
    return report


def run_doctor(ctx, out=None, probe: bool = False) -> int:
    """Print the report; exit code 1 when any note cannot be read or the review history needs
    attention (lost, unusable, recorded in another data dir, or older than the notes).
    torch and CUDA are probed (in a subprocess, seconds) only when `probe` is set."""
    from studyapp import __version__
    from studyapp.vault import Vault
    from studyapp.vault.vault import folder_is_read_only

    paths = ctx.paths
    lines = [
        f"studyapp   {__version__}",
        f"python     {platform.python_version()} ({sys.executable})",
        f"platform   {platform.platform()}",
        f"torch      {probe_torch(paths) if probe else remembered_torch_report(paths)}",
        f"sandbox    {sandbox_report()}",
        f"data dir   {paths.data_dir}",
        f"config     {paths.config_file}{'' if paths.config_file.exists() else ' (absent: defaults)'}",
        f"vault      {paths.vault_dir}{' (default, seeded from the starter deck)' if paths.vault_is_default else ''}",
    ]
    try:
        if folder_is_read_only(paths.vault_dir):
            lines[-1] += " (read-only: reviews cannot be written into its notes)"
    except OSError:
        pass  # missing: loading says so below
    from studyapp.history_guard import (
        check_history,
        doctor_lines,
        needs_attention,
        notes_ahead_line,
        review_log_line,
    )
    from studyapp.textwidth import shown

    history = check_history(paths, record=False, logs_in_vault=ctx.settings.history_log == "vault")
    lines.extend(doctor_lines(history))
    from studyapp.vault_binding import doctor_line

    served = doctor_line(paths, ctx.settings)
    if served:
        lines.append(served)
    lines.append(shown(review_log_line(paths, ctx.settings)))  # names other devices' files
    vault = Vault(paths.vault_dir, paths.cache_file)
    snapshot = vault.load()
    problems = snapshot.problems + vault.whole_file_problems(snapshot.notes)  # every byte, not heads
    bad = {problem.path for problem in problems}
    notes = [note for note in snapshot.notes if note.path not in bad]
    # "never reviewed" is the scheduler's notion of new (schedule.has_legacy_history)
    never = sum(note.review_count == 0 and note.last_reviewed is None for note in notes)
    without_block = sum(not note.has_block for note in notes)
    lines.append(f"notes      {len(notes)} readable ({never} never reviewed, "
                 f"{without_block} without a metadata block), "
                 f"{len(problems)} with problems")
    for problem in sorted(problems, key=lambda p: p.path):
        lines.append(f"  problem  {problem.path}: {problem.reason}")
    ahead = notes_ahead_line(paths, notes)
    if ahead:
        lines.append(ahead)
    print("\n".join(lines), file=out or sys.stdout)
    return ExitCode.FAILED if problems or ahead or needs_attention(history) else ExitCode.OK
