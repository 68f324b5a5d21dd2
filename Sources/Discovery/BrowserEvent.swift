import SystemIO

/// One service instance as DNS-SD sees it: its instance name on one interface. The same
/// receiver seen on two interfaces is two keys with the same name.
package struct ServiceKey: Hashable, Sendable, CustomStringConvertible {
    package let name: String
    /// The interface index it was found on (if_nametoindex numbering).
    package let interface: UInt32

    package init(name: String, interface: UInt32) {
        self.name = name
        self.interface = interface
    }

    package var description: String { "\"\(name)\"@\(interface)" }
}

/// What ``SessionBrowser`` reports, in order, from the loop thread. Pure data, so the state
/// machines that consume it (``ReceiverDirectory``, ``FollowReceiver``) test without a daemon.
package enum BrowserEvent: Equatable, Sendable {
    /// The instance appeared on that interface (reported once, however many protocols see it).
    case found(ServiceKey)
    /// Its SRV and TXT records: host target, port, raw TXT bytes. Repeats when they change.
    case resolved(ServiceKey, host: String, port: UInt16, txt: [UInt8])
    /// Every address now known for its host target on that interface, with the resolved port
    /// applied and the scope id of IPv6 link-local addresses set. Repeats when the set changes.
    case addresses(ServiceKey, [SocketAddress])
    /// It left that interface (goodbye packet or expiry).
    case lost(ServiceKey)
    /// The mDNS responder went away (it crashed or was stopped): nothing is known until it is
    /// back; the browser retries with back-off.
    case responderLost(retryIn: Duration)
    /// Browsing works again; instances still there are reported afresh with ``found(_:)``.
    case responderBack
}
