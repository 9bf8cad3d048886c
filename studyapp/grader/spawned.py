"""Entry point of a child started as a fresh interpreter (the CUDA path; see `sandbox.run_spawned`).

It reads its job from stdin (written by the trusted CUDA worker), limits itself before torch or
any learner code runs, then behaves exactly like a forked child.
"""

from __future__ import annotations

import io
import json
import os
import sys


def main() -> None:
    stdin = sys.stdin.buffer.read()
    workdir = os.environ.pop("STUDYAPP_GRADER_WORKDIR")
    result_fd = int(os.environ.pop("STUDYAPP_GRADER_RESULT_FD"))
    job_limits = json.loads(os.environ.pop("STUDYAPP_GRADER_LIMITS"))  # `Limits` as a dict
    confinement_text = os.environ.pop("STUDYAPP_GRADER_CONFINEMENT")

    from studyapp.grader import guard  # noqa: F401  (reads STUDYAPP_GRADER_WITHOUT before the learner's environment replaces this one)
    from studyapp.grader.channel import NONCE_BYTES, READY
    from studyapp.grader.confine import Confinement, restrict
    from studyapp.grader.limits import Limits
    from studyapp.grader.sandbox import STARTUP_LIMIT, _child_setup
    from studyapp.grader.worker import KERNELS_ENV, load_drills

    kernels = os.environ.get(KERNELS_ENV)  # read now: the learner's environment lacks it

    nonce, job_bytes = stdin[:NONCE_BYTES], stdin[NONCE_BYTES:]
    del stdin
    confinement = Confinement.from_dict(json.loads(confinement_text))

    # CUDA maps huge address ranges and starts threads: no RLIMIT_AS, more tasks, and CPU time
    # for the import; the parent's wall clock is what bounds the learner's code.
    limits = Limits(timeout=float(job_limits["timeout"]) + STARTUP_LIMIT,
                    memory_budget=int(job_limits["memory_budget"]), output_cap=int(job_limits["output_cap"]),
                    extra_processes=max(int(job_limits["extra_processes"]), 64),
                    scratch_bytes=int(job_limits["scratch_bytes"]), scratch_files=int(job_limits["scratch_files"]))
    _child_setup(1, (result_fd,), limits, workdir, confinement, limit_memory=False)

    import torch

    from studyapp.grader.child import run_and_exit
    from studyapp.grader.withhold import Withholding
    from studyapp.kernels_loader import PACKAGE_NAME

    job = torch.load(io.BytesIO(job_bytes), weights_only=True)  # cases stay on their device
    drills = load_drills(kernels)
    drill = drills[job["drill"]]
    withheld = Withholding.build(PACKAGE_NAME, drills.values())
    restrict(confinement, workdir, cuda=True)
    withheld.apply(drills.values())
    os.write(result_fd, READY)
    run_and_exit(drill, job["source"], job["filename"], job["payloads"], result_fd, nonce, limits, withheld)


if __name__ == "__main__":
    main()
