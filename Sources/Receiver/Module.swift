// Receiver: filled in by its issue.
