// BoardLinkTests: tests arrive with the issue that builds BoardLink.
import Testing
