// GamepadTests: tests arrive with the issue that builds Gamepad.
import Testing
