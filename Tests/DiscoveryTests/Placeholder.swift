// DiscoveryTests: tests arrive with the issue that builds Discovery.
import Testing
