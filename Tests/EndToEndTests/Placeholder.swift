// EndToEndTests: tests arrive with the issue that builds EndToEnd.
import Testing
