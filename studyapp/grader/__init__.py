"""Grading learners' drills: a warm worker process runs each submission in an isolated child.

The app talks to it through `client.GraderClient` only; nothing here imports torch except the
worker side (`worker`, `child`, `sandbox`).
"""
