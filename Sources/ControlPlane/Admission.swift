/// Who may drive (Protocol.md §7.4): `first` and `any` admit every source (ownership then picks
/// among them); `paired` admits only sources whose hello carried the receiver's pairing code.
public enum AcceptMode: String, Sendable, CaseIterable {
    case first, any, paired
}

/// The receiver's admission decisions, as a value type over source addresses.
public struct Admission<Source: Hashable & Sendable>: Sendable {
    public let mode: AcceptMode
    public let pairingCode: String
    public let session: String
    /// Sources that said hello and were accepted, with their display names.
    public private(set) var accepted: [Source: String] = [:]
    var lastDeny: [Source: ContinuousClock.Instant] = [:]
    /// Bound on remembered sources, so a flood of spoofed addresses cannot grow memory.
    public static var capacity: Int { 1024 }

    public init(mode: AcceptMode, pairingCode: String, session: String = "") {
        self.mode = mode
        self.pairingCode = pairingCode
        self.session = session
    }

    public enum Decision: Hashable, Sendable {
        case accept
        case deny(ControlMessage.Deny)
    }

    /// Answers a hello.
    public mutating func hello(_ h: ControlMessage.Hello, from source: Source) -> Decision {
        if !session.isEmpty, !h.session.isEmpty, h.session != session {
            return .deny(.init(reason: .wrongSession, text: "this robot is in session \"\(session)\", not \"\(h.session)\""))
        }
        if mode == .paired {
            if h.pairingCode.isEmpty {
                return .deny(.init(reason: .pairingRequired, text: "this robot needs a pairing code: start the controller with --pair CODE (the code is on the robot's screen)"))
            }
            if h.pairingCode != pairingCode {
                return .deny(.init(reason: .wrongPairingCode, text: "wrong pairing code \"\(h.pairingCode)\": check the code on the robot's screen"))
            }
        }
        if accepted.count >= Self.capacity, accepted[source] == nil, let any = accepted.keys.first {
            accepted.removeValue(forKey: any)
        }
        accepted[source] = h.displayName
        return .accept
    }

    public mutating func bye(from source: Source) { accepted.removeValue(forKey: source) }

    /// May state packets from `source` drive?
    public func mayDrive(_ source: Source) -> Bool {
        mode != .paired || accepted[source] != nil
    }

    /// For a refused state packet: the deny to send back, at most once a second per source.
    public mutating func denyForStatePacket(from source: Source, now: ContinuousClock.Instant) -> ControlMessage.Deny? {
        guard !mayDrive(source) else { return nil }
        if let last = lastDeny[source], now - last < .seconds(1) { return nil }
        if lastDeny.count >= Self.capacity { lastDeny.removeAll(keepingCapacity: true) }
        lastDeny[source] = now
        return .init(reason: .pairingRequired, text: "this robot needs a pairing code: start the controller with --pair CODE (the code is on the robot's screen)")
    }

    public func displayName(of source: Source) -> String? { accepted[source] }
}
