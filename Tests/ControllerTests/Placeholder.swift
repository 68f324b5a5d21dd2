// ControllerTests: tests arrive with the issue that builds Controller.
import Testing
