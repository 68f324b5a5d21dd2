// ReceiverTests: tests arrive with the issue that builds Receiver.
import Testing
