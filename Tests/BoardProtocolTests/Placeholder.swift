// BoardProtocolTests: tests arrive with the issue that builds BoardProtocol.
import Testing
