// MIDIFraming: filled in by its issue.
