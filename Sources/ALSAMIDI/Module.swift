// ALSAMIDI: filled in by its issue.
