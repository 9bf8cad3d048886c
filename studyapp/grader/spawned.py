"""Entry point of a child started as a fresh interpreter (the CUDA path; see `sandbox.run_spawned`).

It reads its job from stdin (written by the trusted CUDA worker), limits itself before torch or
any learner code runs, then behaves exactly like a forked child.
"""

from __future__ import annotations

import io
import os
import sys


def main() -> None:
    job_bytes = sys.stdin.buffer.read()
    workdir = os.environ.pop("STUDYAPP_GRADER_WORKDIR")
    result_fd = int(os.environ.pop("STUDYAPP_GRADER_RESULT_FD"))
    timeout, memory, output, processes = os.environ.pop("STUDYAPP_GRADER_LIMITS").split(",")

    from studyapp.grader.limits import Limits
    from studyapp.grader.sandbox import READY, STARTUP_LIMIT, _child_setup

    # CUDA maps huge address ranges and starts threads: no RLIMIT_AS, more tasks, and CPU time
    # for the import; the parent's wall clock is what bounds the learner's code.
    limits = Limits(timeout=float(timeout) + STARTUP_LIMIT, memory_budget=int(memory),
                    output_cap=int(output), extra_processes=max(int(processes), 64))
    _child_setup(1, result_fd, limits, workdir, limit_memory=False)

    import torch

    from studyapp.grader.child import run_and_exit
    from studyapp.grader.worker import load_drills

    job = torch.load(io.BytesIO(job_bytes), weights_only=True)  # cases stay on their device
    drill = load_drills()[job["drill"]]
    os.write(result_fd, READY)
    run_and_exit(drill, job["source"], job["filename"], job["payloads"], result_fd)


if __name__ == "__main__":
    main()
