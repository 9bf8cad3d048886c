"""Allow `python -m studyapp`."""

from studyapp.cli import run

raise SystemExit(run())
