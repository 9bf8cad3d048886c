"""Allow `python -m studyapp`."""

from studyapp.cli import main

raise SystemExit(main())
