// Controller: filled in by its issue.
