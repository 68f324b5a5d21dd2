// Discovery: filled in by its issue.
