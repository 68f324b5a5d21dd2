import Synchronization
import SystemIO

/// Where state packets go, swappable while the controller runs.
///
/// The send loop reads ``current`` before every send, so whoever finds receivers (today the
/// `--peer` option; later a DNS-SD browser following a session's receiver) can call ``set(_:)``
/// from any thread at any time. Setting a new peer also wakes the loop, which sends the current
/// state to it at once instead of at the next period. While ``current`` is nil nothing is sent
/// (the status line says so) but the input is still read, and the way out still happens.
package final class Destination: Sendable {
    package struct Peer: Hashable, Sendable {
        package let address: SocketAddress
        /// How the person named it (`robot.local:5000`, a service name), for the status line.
        package let label: String
        /// The resend period this peer asks for (a discovered receiver's timing contract, see
        /// `SendCadence`); nil = the `--rate` the controller was started with.
        package let period: Duration?
        /// Which receiver this is (its DNS-SD instance name) when it was discovered: a new
        /// address of the same receiver keeps the controller's connection (Protocol.md §6.4).
        package let receiver: String?
        /// Which run of that receiver (its TXT `peer` id, new at every start): a receiver that
        /// restarted under the same name does not know the controller's connection, so the
        /// controller says hello again rather than carry the old connection over.
        package let incarnation: String?

        package init(address: SocketAddress, label: String, period: Duration? = nil, receiver: String? = nil,
                    incarnation: String? = nil) {
            self.address = address
            self.label = label
            self.period = period
            self.receiver = receiver
            self.incarnation = incarnation
        }

        /// `robot.local:5000 (192.168.1.7:5000)`, or just the address when that is the label.
        package var description: String {
            label == address.description ? label : "\(label) (\(address))"
        }
    }

    private struct Shared {
        var peer: Peer?
        /// True from ``set(_:)`` until the first packet to that peer went out.
        var awaitingFirstSend = true
        var note: String?
    }

    private let shared: Mutex<Shared>
    /// Raised by ``set(_:)``; the loop polls its descriptor.
    let changed: EventFlag
    /// Raised when the first packet to a newly set peer went out (see ``sent(to:)``); whoever
    /// sets peers (a session follower) polls it to call the peer connected.
    package let firstSent: EventFlag

    package init(_ initial: Peer?) throws(SystemError) {
        shared = Mutex(Shared(peer: initial))
        changed = try EventFlag()
        firstSent = try EventFlag()
    }

    package var current: Peer? { shared.withLock { $0.peer } }

    package func set(_ new: Peer?) {
        let differs = shared.withLock { s -> Bool in
            defer { s.peer = new }
            if s.peer != new { s.awaitingFirstSend = true }
            return s.peer != new
        }
        if differs { changed.raise() }
    }

    /// The send loop calls this after each datagram that went out to `peer`.
    func sent(to peer: Peer) {
        let first = shared.withLock { s -> Bool in
            guard s.awaitingFirstSend, s.peer == peer else { return false }
            s.awaitingFirstSend = false
            return true
        }
        if first { firstSent.raise() }
    }

    /// What the status line says about the target instead of the bare peer (e.g. a session
    /// follower's `following "robot" at 198.18.0.1:45678 (connected)`); nil = the default.
    package var note: String? {
        get { shared.withLock { $0.note } }
        set { shared.withLock { $0.note = newValue } }
    }
}
