"""An installed copy keeps its kernels inside site-packages (`studyapp/_bundled/kernels`), under a
root the child may read: learner code must still not read a drill's reference or bank there."""

from __future__ import annotations

import json
import os
import shutil
import site
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from grader_helpers import FAKE_KERNELS, ROOT, grade_limits

from studyapp.grader.confine import probe

pytest.importorskip("torch")

PEEK = textwrap.dedent("""
    import importlib, os, sys
    def scaled_dot_product_attention(Q, K, V, mask=None):
        grade = next(m for n, m in sys.modules.items() if n.endswith(".sdpa.grade"))
        folder = os.path.dirname(grade.__file__)
        seen = []
        for name in ("reference.py", "grade.py", "bank/right", "bank/right/logsumexp.py", ".", ".."):
            path = os.path.join(folder, name)
            try:
                os.listdir(path) if os.path.isdir(path) else open(path).read()
                seen.append(f"{name}=read")
            except OSError as exc:
                seen.append(f"{name}={type(exc).__name__}")
        import {module}  # a package beside the kernels that the worker never imported
        seen.append("import=ok")
        raise RuntimeError(" ".join(seen))
""")


def in_site_packages(source: Path):
    """A copy of `source` in this interpreter's site-packages, as `pip install` lays kernels out."""
    site_packages = next(os.path.realpath(p) for p in site.getsitepackages() if os.path.isdir(p))
    assert site_packages.startswith(os.path.realpath(sys.prefix) + os.sep)  # a readable root
    holder = Path(tempfile.mkdtemp(prefix="studyapp-test-install-", dir=site_packages))
    try:
        shutil.copytree(source, holder / "kernels", ignore=shutil.ignore_patterns("__pycache__"))
        yield holder / "kernels"
    finally:
        shutil.rmtree(holder)


@pytest.fixture
def installed_kernels():
    yield from in_site_packages(ROOT / "kernels")


@pytest.fixture
def installed_fake_kernels():
    yield from in_site_packages(FAKE_KERNELS)


def not_imported_package() -> str:
    """A top-level package in site-packages that a grader worker does not import."""
    import importlib.util

    for name in ("yaml", "pygments", "hypothesis", "rich"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin and "site-packages" in spec.origin:
            return name
    pytest.skip("no spare package in site-packages")


def test_kernels_inside_site_packages_stay_unreadable(installed_kernels, tmp_path):
    from studyapp.grader.client import GraderClient
    from studyapp.grader.worker import KERNELS_ENV

    if "files" not in probe().to_dict()["active"]:
        pytest.skip("no Landlock here")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env[KERNELS_ENV] = str(installed_kernels)
    path = tmp_path / "peek.py"
    path.write_text(PEEK.replace("{module}", not_imported_package()))
    with GraderClient(grade_limits(), env=env) as grader:
        verdict = grader.grade("sdpa", path, device="cpu", seed=1)
        reference = grader.grade("sdpa", installed_kernels / "sdpa" / "reference.py", device="cpu", seed=1)
    text = json.dumps(verdict)
    assert verdict["status"] != "pass", verdict
    for name in ("reference.py", "grade.py", "bank/right", "bank/right/logsumexp.py", ".", ".."):
        assert f"{name}=PermissionError" in text, verdict
    assert "import=ok" in text, verdict
    assert reference["status"] == "pass", reference


def test_a_spawned_child_cannot_read_them_either(installed_fake_kernels, monkeypatch):
    """The CUDA path's fresh interpreter works out what to hide after its environment is scrubbed."""
    import io

    import torch

    from studyapp.grader import sandbox
    from studyapp.grader.limits import Limits
    from studyapp.grader.worker import KERNELS_ENV

    confinement = probe()
    if "files" not in confinement.to_dict()["active"]:
        pytest.skip("no Landlock here")
    monkeypatch.setenv(KERNELS_ENV, str(installed_fake_kernels))
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    source = textwrap.dedent("""
        import os, sys
        def add(a, b):
            path = os.path.join(os.path.dirname(sys.modules["studyapp_kernels"].__file__), "__init__.py")
            try:
                open(path).read()
                raise ValueError("read")
            except PermissionError:
                return a + b
    """)
    job = io.BytesIO()
    payload = {"a": torch.ones(2), "b": torch.ones(2)}
    torch.save({"drill": "add", "source": source, "filename": "/x.py", "payloads": [payload]}, job)
    run = sandbox.run_spawned(job.getvalue(), Limits(timeout=5.0, memory_budget=512 << 20), lambda: False,
                              confinement)
    assert run.outcome is not None, run.output.decode(errors="replace")
    assert "error" not in sandbox.load_outcome(run.outcome)["results"][0], sandbox.load_outcome(run.outcome)


def test_the_kernels_and_the_apps_package_are_hidden():
    """The worker calls this after loading the drills: the folder they came from, and studyapp's."""
    import studyapp
    from studyapp.grader.confine import hidden_folders
    from studyapp.kernels_loader import load_kernels

    kernels = os.path.realpath(load_kernels().__path__[0])
    hidden = hidden_folders()
    assert kernels in hidden
    assert os.path.realpath(os.path.dirname(studyapp.__file__)) in hidden


def test_a_root_holding_a_hidden_folder_is_granted_around_it(tmp_path):
    """Everything under the root but the hidden folder, and no folder above it (a Landlock rule
    on a folder covers all that lies below it)."""
    from studyapp.grader.confine import granted_around

    root = tmp_path / "prefix"
    hidden = root / "lib" / "site-packages" / "studyapp"
    for folder in (hidden / "_bundled" / "kernels", root / "bin", root / "lib" / "site-packages" / "torch"):
        folder.mkdir(parents=True)
    for file in (root / "pyvenv.cfg", root / "lib" / "site-packages" / "six.py", hidden / "__init__.py"):
        file.write_text("")
    (root / "lib" / "site-packages" / "link").symlink_to(hidden)
    (root / "lib64").symlink_to(root / "lib")
    other = tmp_path / "other"
    other.mkdir()

    granted = granted_around([str(root), str(root / "lib" / "site-packages"), str(other)], [str(hidden)])

    assert sorted(granted) == sorted(str(p) for p in (
        root / "bin", root / "pyvenv.cfg", root / "lib" / "site-packages" / "torch",
        root / "lib" / "site-packages" / "six.py", other))


def test_a_site_packages_entry_removed_while_the_worker_runs_breaks_no_grade(installed_kernels):
    """The worker lists site-packages entry by entry once; a package removed later (pip, or two
    test workers' folders) made every child fail to confine itself, and no grade ran."""
    from studyapp.grader.client import GraderClient
    from studyapp.grader.worker import KERNELS_ENV

    if "files" not in probe().to_dict()["active"]:
        pytest.skip("no Landlock here")
    site_packages = installed_kernels.parent.parent
    passing = installed_kernels / "sdpa" / "reference.py"
    going = Path(tempfile.mkdtemp(prefix="studyapp-test-going-", dir=site_packages))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env[KERNELS_ENV] = str(installed_kernels)
    try:
        with GraderClient(grade_limits(), env=env) as grader:
            assert grader.grade("sdpa", passing, device="cpu", seed=1)["status"] == "pass"
            shutil.rmtree(going)
            verdict = grader.grade("sdpa", passing, device="cpu", seed=1)
    finally:
        shutil.rmtree(going, ignore_errors=True)
    assert verdict["status"] == "pass", verdict


def test_a_package_installed_beside_while_the_worker_runs_leaves_imports_working(installed_kernels, tmp_path):
    """Site-packages cannot be listed by learner code (it holds the kernels): the import system
    lists it before the walls go up. A pip install beside the app (here, a folder added) changed
    the folder after the worker listed it, and learner code then could not import any package
    the worker had not imported ("No module named 'yaml'", blamed on the learner)."""
    from studyapp.grader.client import GraderClient
    from studyapp.grader.worker import KERNELS_ENV

    if "files" not in probe().to_dict()["active"]:
        pytest.skip("no Landlock here")
    site_packages = installed_kernels.parent.parent
    path = tmp_path / "imports.py"
    module = not_imported_package()
    path.write_text(f"def scaled_dot_product_attention(Q, K, V, mask=None):\n    import {module}\n"
                    "    raise RuntimeError('import=ok')\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env[KERNELS_ENV] = str(installed_kernels)
    coming = None
    try:
        with GraderClient(grade_limits(), env=env) as grader:
            assert grader.grade("sdpa", installed_kernels / "sdpa" / "reference.py", device="cpu",
                                seed=1)["status"] == "pass"
            coming = Path(tempfile.mkdtemp(prefix="studyapp-test-coming-", dir=site_packages))
            verdict = grader.grade("sdpa", path, device="cpu", seed=1)
    finally:
        if coming is not None:
            shutil.rmtree(coming, ignore_errors=True)
    assert "import=ok" in json.dumps(verdict), verdict


def test_a_package_installed_beside_while_learner_code_runs_leaves_imports_working(installed_kernels, tmp_path):
    """The same change to site-packages, made while the learner's code runs (behind the walls):
    the import system saw the folder's new mtime at the next import and listed it again, which
    the walls refuse, and then knew nothing in it ("No module named ..."). Seen in CI, where a
    test beside this one changes site-packages at any moment; a `pip install` does the same."""
    import threading
    import time

    from studyapp.grader.client import GraderClient
    from studyapp.grader.worker import KERNELS_ENV

    if "files" not in probe().to_dict()["active"]:
        pytest.skip("no Landlock here")
    site_packages = installed_kernels.parent.parent
    path = tmp_path / "imports.py"
    module = not_imported_package()
    path.write_text(f"import time\n_first = [True]\n\ndef scaled_dot_product_attention(Q, K, V, mask=None):\n"
                    f"    if _first[0]:\n        _first[0] = False\n        time.sleep(2.5)\n"
                    f"    import {module}\n    raise RuntimeError('import=ok')\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env[KERNELS_ENV] = str(installed_kernels)
    made: list[Path] = []

    def install_meanwhile() -> None:
        time.sleep(1.0)  # the learner's code is running (sleeping) behind the walls by now
        made.append(Path(tempfile.mkdtemp(prefix="studyapp-test-coming-", dir=site_packages)))

    try:
        with GraderClient(grade_limits(), env=env) as grader:
            assert grader.grade("sdpa", installed_kernels / "sdpa" / "reference.py", device="cpu",
                                seed=1)["status"] == "pass"
            meanwhile = threading.Thread(target=install_meanwhile)
            meanwhile.start()
            verdict = grader.grade("sdpa", path, device="cpu", seed=1)
            meanwhile.join()
    finally:
        for folder in made:
            shutil.rmtree(folder, ignore_errors=True)
    assert "import=ok" in json.dumps(verdict), verdict
