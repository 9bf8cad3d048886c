"""Grading learners' drills: a warm worker process runs each submission in an isolated child.

The app talks to it through `client.GraderClient` only, and everything that crosses (the job,
the verdict, the limits, the child's stage, whose failure an error is) is typed once in
`contract`; nothing here imports torch except the worker side (`worker`, `child`, `sandbox`,
`results`). The child's walls live in `confine`, the one frame it may send back in `channel`,
and what the parent accepts from it in `results`.
"""
