// Gamepad: filled in by its issue.
