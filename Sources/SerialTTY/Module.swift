// SerialTTY: filled in by its issue.
