"""The review history as an append-only log per device, and the SQLite cache rebuilt from it.

- `events`: what one line of a log holds;
- `eventlog`: one JSON-lines file per device (`<vault>/.studyapp/log/<device>.jsonl` by
  default), appended to only by its own device, so any sync tool merges the folder;
- `replay`: every device's events, deduplicated and in time order, through FSRS;
- `sync`: bring the database and the notes' owned keys up to the log (on start, and when the
  log folder changes).
"""
