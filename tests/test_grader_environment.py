"""The environment allow-list: the settings Python, torch and CUDA read pass, tokens never do,
even when their names start like a setting (NVIDIA_API_KEY, TORCH_HUB_TOKEN)."""

from __future__ import annotations

import pytest

from studyapp.grader.environment import learner_environment, worker_environment

SECRETS = ("NVIDIA_API_KEY", "PYTHON_KEYRING_PASSWORD", "TORCH_HUB_TOKEN", "CUDA_AUTH", "CUDA_Api_Key",
           "PYTORCH_SESSION_COOKIE", "CUDA_CREDENTIALS_FILE", "PYTHONPASSWD", "OMP_SECRET")
SETTINGS = ("CUDA_VISIBLE_DEVICES", "OMP_NUM_THREADS", "PYTHONHASHSEED", "PYTHONUTF8", "PYTHONIOENCODING",
            "PYTORCH_CUDA_ALLOC_CONF", "TORCH_SHOW_CPP_STACKTRACES", "CUBLAS_WORKSPACE_CONFIG",
            "NVIDIA_TF32_OVERRIDE", "MKL_NUM_THREADS", "LC_ALL", "LANG", "PATH")
APP = {name: "hunter2" for name in SECRETS} | {name: "1" for name in SETTINGS}


@pytest.mark.parametrize("name", SECRETS)
def test_a_secret_reaches_neither_the_worker_nor_learner_code(name):
    assert name not in worker_environment(APP)
    assert name not in learner_environment(APP, "/scratch")


@pytest.mark.parametrize("name", SETTINGS)
def test_the_settings_python_torch_and_cuda_read_pass(name):
    assert worker_environment(APP)[name] == "1"
    assert learner_environment(APP, "/scratch")[name] == "1"


def test_only_named_python_and_nvidia_variables_pass():
    """Prefixes only where a family of settings needs them: PYTHON* and NVIDIA_* are listed by name."""
    app = {"PYTHONFOO": "1", "NVIDIA_FOO": "1", "PYTHONHASHSEED": "0"}
    assert learner_environment(app, "/scratch").keys() >= {"PYTHONHASHSEED"}
    assert not {"PYTHONFOO", "NVIDIA_FOO"} & learner_environment(app, "/scratch").keys()


def test_the_worker_keeps_its_own_and_the_learner_does_not():
    app = {"HOME": "/home/me", "TMPDIR": "/tmp", "PYTHONPATH": "/src", "STUDYAPP_GRADER_KERNELS": "/k"}
    assert worker_environment(app) == app
    assert learner_environment(app, "/scratch") == {"HOME": "/scratch", "TMPDIR": "/scratch", "CUDA_CACHE_DISABLE": "1"}
