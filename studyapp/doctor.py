"""`studyapp doctor`: the environment and every note that cannot be read, in one report."""

from __future__ import annotations

import platform
import subprocess
import sys

_TORCH_PROBE = (
    "import torch; print(torch.__version__); "
    "print(torch.cuda.is_available()); "
    "print(torch.cuda.get_device_name(0) if torch.cuda.is_available() else '')"
)


def torch_report() -> str:
    """torch version and CUDA, probed in a subprocess so this process never imports torch."""
    try:
        out = subprocess.run([sys.executable, "-c", _TORCH_PROBE], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"could not be checked ({exc})"
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["unknown error"])[-1]
        return f"not importable ({last})"
    version, cuda, device = (out.stdout.splitlines() + ["", "", ""])[:3]
    return f"{version}, CUDA {'available: ' + device if cuda == 'True' else 'not available'}"


def sandbox_report() -> str:
    """Which walls the grader puts around learner code on this machine (the same probe the worker runs)."""
    if not sys.platform.startswith("linux"):
        return "none on this platform: learner code runs with your permissions (Linux only)"
    from studyapp.grader.confine import probe

    try:
        return probe().describe()
    except OSError as exc:
        return f"could not be checked ({exc})"


def run_doctor(ctx, out=None) -> int:
    """Print the report; exit code 1 when any note cannot be read."""
    from studyapp import __version__
    from studyapp.vault import Vault

    paths = ctx.paths
    lines = [
        f"studyapp   {__version__}",
        f"python     {platform.python_version()} ({sys.executable})",
        f"platform   {platform.platform()}",
        f"torch      {torch_report()}",
        f"sandbox    {sandbox_report()}",
        f"data dir   {paths.data_dir}",
        f"config     {paths.config_file}{'' if paths.config_file.exists() else ' (absent: defaults)'}",
        f"vault      {paths.vault_dir}{' (default, seeded from the starter deck)' if paths.vault_is_default else ''}",
    ]
    snapshot = Vault(paths.vault_dir, paths.cache_file).load()
    # "never reviewed" is the scheduler's notion of new (schedule.has_legacy_history)
    never = sum(note.review_count == 0 and note.last_reviewed is None for note in snapshot.notes)
    without_block = sum(not note.has_block for note in snapshot.notes)
    lines.append(f"notes      {len(snapshot.notes)} readable ({never} never reviewed, "
                 f"{without_block} without a metadata block), "
                 f"{len(snapshot.problems)} with problems")
    for problem in snapshot.problems:
        lines.append(f"  problem  {problem.path}: {problem.reason}")
    print("\n".join(lines), file=out or sys.stdout)
    return 1 if snapshot.problems else 0
