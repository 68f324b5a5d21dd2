import ControlWire
import RemoteWire

/// Who may drive (Protocol.md §7.4): `first` and `any` admit every source (ownership then picks
/// among them); `paired` admits only sources whose hello carried the receiver's pairing code;
/// `secret` only controllers that proved they know the robot's secret, and then only their
/// sealed datagrams (Protocol.md "Security").
package enum AcceptMode: String, Sendable, CaseIterable {
    case first, any, paired, secret
}

/// The receiver's admission decisions, as a value type over source addresses.
package struct Admission<Source: Hashable & Sendable>: Sendable {
    package let mode: AcceptMode
    package let pairingCode: String
    package let session: String
    /// Sources that said hello and were accepted, with their display names.
    package private(set) var accepted: [Source: WireText] = [:]
    var lastDeny: [Source: ContinuousClock.Instant] = [:]
    /// Bound on remembered sources, so a flood of spoofed addresses cannot grow memory.
    package static var capacity: Int { 1024 }

    package init(mode: AcceptMode, pairingCode: String, session: String = "") {
        self.mode = mode
        self.pairingCode = pairingCode
        self.session = session
    }

    package enum Decision: Hashable, Sendable {
        case accept
        case deny(ControlMessage.Deny)
        /// `secret` mode: answer with a challenge; ``admit(_:name:)`` once the proof is right.
        case challenge
    }

    static var secretRequired: ControlMessage.Deny { ControlMessage.Deny(reason: .pairingRequired,
        text: "this robot needs its secret: start the controller with --secret \"WORDS\" (the 12 words on the robot's screen)") }
    static var pairingRequired: ControlMessage.Deny { ControlMessage.Deny(reason: .pairingRequired,
        text: "this robot needs a pairing code: start the controller with --pair CODE (the code is on the robot's screen)") }

    /// Answers a hello, and admits its source when accepted.
    package mutating func hello(_ h: ControlMessage.Hello, from source: Source) -> Decision {
        let decision = decide(h)
        if decision == .accept { admit(source, name: h.displayName) }
        return decision
    }

    /// What a hello would get, admitting nobody (a contender at a live owner's address is
    /// admitted only once it shows it holds the connection it was given).
    package func decide(_ h: ControlMessage.Hello) -> Decision {
        if !session.isEmpty, !h.session.isEmpty, !h.session.matches(session) {
            return .deny(.init(reason: .wrongSession, text: "this robot is in session \"\(session)\", not \"\(h.session)\""))
        }
        if mode == .secret { return .challenge }
        if mode == .paired {
            if h.pairingCode.isEmpty { return .deny(Self.pairingRequired) }
            if !h.pairingCode.matches(pairingCode) {
                return .deny(.init(reason: .wrongPairingCode, text: "wrong pairing code \"\(h.pairingCode)\": check the code on the robot's screen"))
            }
        }
        return .accept
    }

    /// Admits `source` under `name` (a hello accepted, or a secret proved).
    package mutating func admit(_ source: Source, name: WireText) {
        if accepted.count >= Self.capacity, accepted[source] == nil, let any = accepted.keys.first {
            accepted.removeValue(forKey: any)
        }
        accepted[source] = name
    }

    package mutating func bye(from source: Source) { accepted.removeValue(forKey: source) }

    /// The controller accepted at `old` now talks from `new` (same connection).
    package mutating func move(from old: Source, to new: Source) {
        guard let name = accepted.removeValue(forKey: old) else { return }
        accepted[new] = name
    }

    /// May plain state packets from `source` drive? (Under `secret` none may: only sealed ones,
    /// see ``mayDriveSealed(_:)``.)
    package func mayDrive(_ source: Source) -> Bool {
        switch mode {
        case .first, .any: true
        case .paired: accepted[source] != nil
        case .secret: false
        }
    }

    /// May sealed state packets from `source` drive (it proved the secret and has not said bye)?
    package func mayDriveSealed(_ source: Source) -> Bool { accepted[source] != nil }

    /// For a refused state packet: the deny to send back, at most once a second per source.
    package mutating func denyForStatePacket(from source: Source, now: ContinuousClock.Instant) -> ControlMessage.Deny? {
        guard !mayDrive(source) else { return nil }
        if let last = lastDeny[source], now - last < .seconds(1) { return nil }
        if lastDeny.count >= Self.capacity { lastDeny.removeAll(keepingCapacity: true) }
        lastDeny[source] = now
        return mode == .secret ? Self.secretRequired : Self.pairingRequired
    }

    package func displayName(of source: Source) -> WireText? { accepted[source] }
}
