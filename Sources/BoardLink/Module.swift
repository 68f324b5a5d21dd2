// BoardLink: filled in by its issue.
