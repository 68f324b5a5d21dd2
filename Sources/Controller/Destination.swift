import Synchronization
import SystemIO

/// Where state packets go, swappable while the controller runs.
///
/// The send loop reads ``current`` before every send, so whoever finds receivers (today the
/// `--peer` option; later a DNS-SD browser following a session's receiver) can call ``set(_:)``
/// from any thread at any time. Setting a new peer also wakes the loop, which sends the current
/// state to it at once instead of at the next period. While ``current`` is nil nothing is sent
/// (the status line says so) but the input is still read, and the way out still happens.
public final class Destination: Sendable {
    public struct Peer: Hashable, Sendable {
        public let address: SocketAddress
        /// How the person named it (`robot.local:5000`, a service name), for the status line.
        public let label: String

        public init(address: SocketAddress, label: String) {
            self.address = address
            self.label = label
        }

        /// `robot.local:5000 (192.168.1.7:5000)`, or just the address when that is the label.
        public var description: String {
            label == address.description ? label : "\(label) (\(address))"
        }
    }

    private let peer: Mutex<Peer?>
    /// Raised by ``set(_:)``; the loop polls its descriptor.
    let changed: EventFlag

    public init(_ initial: Peer?) throws(SystemError) {
        peer = Mutex(initial)
        changed = try EventFlag()
    }

    public var current: Peer? { peer.withLock { $0 } }

    public func set(_ new: Peer?) {
        let differs = peer.withLock { p -> Bool in
            defer { p = new }
            return p != new
        }
        if differs { changed.raise() }
    }
}
