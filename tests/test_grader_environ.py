"""The app's environment stays the app's, even where Landlock and the PID namespace are missing.

The app (here a small runner grading one file, as the CLI does) is started with a token in its
environment; learner code, running as the same user as the app, looks for it everywhere it
could: `os.environ`, its own /proc/self/environ, and /proc/<pid>/environ of every process it
can see (its parent, the worker, the app, any other). It must find it nowhere: the learner gets
a minimal environment, the worker is started with one, and the app and the worker are not
dumpable, so their /proc/<pid>/environ is not readable to learner code of their own user.

When the tests run as root, learner code runs as `nobody`, who could not read the app's
environment anyway: the runner is then started as an ordinary user, as a real install runs.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import textwrap
import uuid
from pathlib import Path

import pytest
from grader_helpers import ROOT

pytest.importorskip("torch")

ORDINARY_USER = "studyapp-hostile"
"""The user the hostile bank runs as (tests/test_grader_hostile.py), made the same way."""
SECRET_NAMES = ("STUDYAPP_TEST_API_TOKEN", "STUDYAPP_TEST_PLAIN_SETTING")
"""One name that says it is a credential, one that does not: neither may reach learner code."""

LOOKER = textwrap.dedent("""
    import os

    def _ancestors():
        pid, seen = os.getpid(), []
        while pid > 1 and pid not in seen:
            seen.append(pid)
            try:
                with open(f"/proc/{pid}/status") as status:
                    pid = int(next(line for line in status if line.startswith("PPid:")).split()[1])
            except (OSError, StopIteration, ValueError):
                break
        return seen

    def add(a, b):
        secret = SECRET.encode()
        found = []
        if SECRET in repr(sorted(os.environ.items())):
            found.append("os.environ")
        try:
            listed = [entry for entry in os.listdir("/proc") if entry.isdigit()]
        except OSError:  # Landlock: only its own /proc entry
            listed = []
        pids = ["self"] + [str(pid) for pid in _ancestors()] + listed
        for pid in pids:
            try:
                with open(f"/proc/{pid}/environ", "rb") as environ:
                    text = environ.read()
            except OSError:
                continue
            if secret in text:
                found.append(f"/proc/{pid}/environ")
        if found:
            raise ValueError("LEAKED in " + ", ".join(found))
        return a + b
""")

RUNNER = textwrap.dedent("""
    import json, os, sys
    sys.path.insert(0, sys.argv[3])
    from grader_helpers import fake_drill_client
    client = fake_drill_client()
    if sys.argv[2]:
        client.env["STUDYAPP_GRADER_WITHOUT"] = sys.argv[2]
    with client:
        verdict = client.grade("add", sys.argv[1], device="cpu")
    print("VERDICT " + json.dumps(verdict))
""")


def _interpreter_for(user: str) -> tuple[list[str], dict[str, str]]:
    """A Python `user` can run that imports torch and studyapp (ours may lie under /root)."""
    import site

    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site_dirs = os.pathsep.join(site.getsitepackages())
    candidates = [([sys.executable], {})] + [([path], {"PYTHONPATH": site_dirs})
                                             for path in (f"/usr/local/bin/{version}", f"/usr/bin/{version}")
                                             if os.path.exists(path)]
    for command, env in candidates:
        probe = subprocess.run(["runuser", "-u", user, "--", "env", *[f"{k}={v}" for k, v in env.items()],
                                *command, "-c", "import torch, studyapp"], capture_output=True, text=True,
                               cwd="/", env=dict(os.environ, PYTHONPATH=str(ROOT)), check=False)
        if probe.returncode == 0:
            return command, env
    pytest.skip(f"no Python that {user} can run imports torch and studyapp")


def _as_an_ordinary_user() -> tuple[list[str], dict[str, str]]:
    """The command prefix and environment that start the runner as a user that is not root."""
    if os.geteuid() != 0:
        return [sys.executable], {}
    if not shutil.which("runuser"):
        pytest.skip("runuser is not installed")
    try:
        pwd.getpwnam(ORDINARY_USER)
    except KeyError:
        if not shutil.which("useradd"):
            pytest.skip("useradd is not installed")
        made = subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                               ORDINARY_USER], capture_output=True, text=True, check=False)
        if made.returncode not in (0, 9):  # 9: it exists (a parallel run made it)
            pytest.skip(f"useradd failed: {made.stderr.strip()}")
    command, env = _interpreter_for(ORDINARY_USER)
    return ["runuser", "-u", ORDINARY_USER, "--", *command], env


@pytest.mark.parametrize("without", ["files,pid namespace", ""], ids=["no landlock, no pid namespace", "every wall"])
def test_learner_code_cannot_read_the_apps_environment(without):
    secret = f"secret-{uuid.uuid4().hex}"
    folder = Path(tempfile.mkdtemp(prefix="studyapp-environ-"))
    try:
        os.chmod(folder, 0o755)
        (folder / "looker.py").write_text(f"SECRET = {secret!r}\n" + LOOKER)
        (folder / "runner.py").write_text(RUNNER)
        prefix, extra = _as_an_ordinary_user()
        python_path = os.pathsep.join([str(ROOT), *([extra["PYTHONPATH"]] if "PYTHONPATH" in extra else [])])
        env = {name: value for name, value in os.environ.items() if not name.startswith("STUDYAPP_GRADER_")}
        env.update({name: secret for name in SECRET_NAMES}, PYTHONPATH=python_path, HOME=str(folder))
        for path in folder.iterdir():
            path.chmod(0o644)
        ran = subprocess.run([*prefix, str(folder / "runner.py"), str(folder / "looker.py"), without,
                              str(ROOT / "tests")], env=env, cwd="/", capture_output=True, text=True,
                             timeout=300, check=False)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    lines = [line for line in ran.stdout.splitlines() if line.startswith("VERDICT ")]
    assert ran.returncode == 0 and lines, ran.stdout[-2000:] + ran.stderr[-3000:]
    verdict = json.loads(lines[-1][len("VERDICT "):])
    assert secret not in json.dumps(verdict), verdict["summary"]
    assert verdict["status"] == "pass", verdict["summary"]
    for name in without.split(",") if without else ():
        assert name in verdict["sandbox"]["missing"], verdict["sandbox"]
