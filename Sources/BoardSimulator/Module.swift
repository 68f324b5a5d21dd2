// BoardSimulator: filled in by its issue.
