// BoardProtocol: filled in by its issue.
