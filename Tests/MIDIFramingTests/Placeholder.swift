// MIDIFramingTests: tests arrive with the issue that builds MIDIFraming.
import Testing
