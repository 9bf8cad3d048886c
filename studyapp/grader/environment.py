"""Which environment variables reach the grader's worker and the learner's code: an allow-list.

The app's environment may hold secrets (API tokens, cloud keys), and whatever learner code reads
can end up in a verdict, hence in the review log synced with the vault. So the worker starts with
only what Python, torch and the grader need, and learner code gets less again. The worker is
scrubbed too, not just the child: a forked child holds a copy of the worker's memory, where the
worker's first environment still lies. Torch-free: the client imports this.
"""

from __future__ import annotations

from collections.abc import Mapping

SECRET_WORDS = ("TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "COOKIE", "SESSION")
"""A name holding one of these (in any case) is dropped before the allow-list is read: a prefix
that keeps a family of settings (TORCH_*) would keep TORCH_HUB_TOKEN too."""
KEPT_NAMES = frozenset({
    "PATH",  # a learner's subprocess finds python; torch's cpp-extension tooling finds a compiler
    "LANG", "LANGUAGE", "TZ",  # text encoding and local time as the learner expects them
    "LD_LIBRARY_PATH",  # where some installs of CUDA and its libraries are found
    # the interpreter's own settings, by name: PYTHON* would keep PYTHON_KEYRING_* and the like
    "PYTHONHOME", "PYTHONUSERBASE", "PYTHONNOUSERSITE", "PYTHONPLATLIBDIR", "PYTHONSAFEPATH",
    "PYTHONHASHSEED", "PYTHONUTF8", "PYTHONIOENCODING", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE",
    "PYTHONPYCACHEPREFIX", "PYTHONWARNINGS", "PYTHONFAULTHANDLER", "PYTHONDEVMODE", "PYTHONMALLOC",
    "PYTHONINTMAXSTRDIGITS", "PYTHONOPTIMIZE", "PYTHONBREAKPOINT",
    # NVIDIA_* is mostly the container runtime's, read before we start; cuBLAS reads this one
    "NVIDIA_TF32_OVERRIDE", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES",
})
KEPT_PREFIXES = (
    "LC_",  # the locale, with LANG
    "OMP_", "MKL_", "OPENBLAS_", "KMP_", "GOMP_",  # CPU thread pools and their pinning
    "CUDA_", "CUBLAS_", "CUDNN_", "NCCL_",  # CUDA_VISIBLE_DEVICES and the CUDA libraries
    "PYTORCH_", "TORCH_",  # torch's own switches (PYTORCH_NVML_BASED_CUDA_CHECK...), too many to list
)
"""Families of settings too large or too open to list by name; `SECRET_WORDS` still applies."""
WORKER_ONLY_NAMES = frozenset({"HOME", "TMPDIR", "PYTHONPATH"})
"""The worker's own: HOME finds a user site-packages, TMPDIR where scratch folders go, PYTHONPATH
this very studyapp. The child gets its scratch folder as HOME and TMPDIR instead."""
WORKER_ONLY_PREFIXES = ("STUDYAPP_GRADER_",)
"""The grader's switches (tests' fake kernels, protections turned off)."""


def looks_secret(name: str) -> bool:
    """Whether the name says it holds a credential (`SECRET_WORDS`), whatever else it starts with."""
    upper = name.upper()
    return any(word in upper for word in SECRET_WORDS)


def _kept(name: str) -> bool:
    return not looks_secret(name) and (name in KEPT_NAMES or name.startswith(KEPT_PREFIXES))


def worker_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """What the worker process is started with."""
    return {name: value for name, value in environ.items() if _kept(name) or (
        not looks_secret(name) and (name in WORKER_ONLY_NAMES or name.startswith(WORKER_ONLY_PREFIXES)))}


def learner_environment(environ: Mapping[str, str], scratch: str) -> dict[str, str]:
    """What learner code sees: the kept variables, and its scratch folder as HOME and TMPDIR.

    CUDA's kernel cache is off: the scratch folder is the only place it could go, and it would
    fill the scratch quota for the learner (a spawned CUDA child reads this before torch loads).
    """
    kept = {name: value for name, value in environ.items()
            if _kept(name) and name not in WORKER_ONLY_NAMES and not name.startswith(WORKER_ONLY_PREFIXES)}
    return {**kept, "HOME": scratch, "TMPDIR": scratch, "CUDA_CACHE_DISABLE": "1"}
