// Pure (no I/O). What a receiver says about itself in its TXT record
// (Protocol.md §6): v, session, peer, name, failsafe, rate, robot.

import RemoteWire

/// The receiver's timing contract: how long silence may last before it stops the motors, and how
/// often it expects a packet. A controller derives its resend period from it (``SendCadence``).
package struct TimingContract: Equatable, Hashable, Sendable, CustomStringConvertible {
    package var failsafe: FailsafeTimeout
    package var rateHz: Int

    package init(failsafe: FailsafeTimeout, rateHz: Int) {
        self.failsafe = failsafe
        self.rateHz = rateHz
    }

    package init(failsafeMilliseconds: Int, rateHz: Int) {
        self.init(failsafe: FailsafeTimeout(milliseconds: failsafeMilliseconds), rateHz: rateHz)
    }

    /// What a receiver announces by default, and what a controller assumes when the keys are absent.
    /// Values outside ``FailsafeTimeout/announcedRange`` and ``SendRate/announcedRange`` are
    /// treated as absent (``standard`` applies, with a note).
    package static let standard = TimingContract(failsafe: .standard, rateHz: SendRate.standardHz)

    package var failsafeMilliseconds: Int { failsafe.milliseconds }
    package var description: String { "failsafe \(failsafeMilliseconds) ms, rate \(rateHz) Hz" }
}

package struct ReceiverAnnouncement: Equatable, Hashable, Sendable {
    /// The protocol version this build speaks (TXT `v`).
    package static let protocolVersion = 1

    package var version: Int
    /// The full session ID, compared byte for byte by controllers.
    package var session: String
    /// Unique per receiver process (may be empty for a receiver announced by hand).
    package var peer: String
    /// The name a person gave the receiver (TXT `name`); the instance name may differ after a
    /// rename on a clash ("robot #2").
    package var displayName: String
    package var timing: TimingContract
    /// The robot's lasting id (TXT `robot`, Protocol.md §6.2): nil when not announced, or not
    /// 8 characters of the id alphabet.
    package var robot: RobotID?

    package init(session: SessionID, peer: String, displayName: String, timing: TimingContract = .standard, robot: RobotID? = nil) {
        self.version = Self.protocolVersion
        self.session = session.text
        self.peer = peer
        self.displayName = displayName
        self.timing = timing
        self.robot = robot
    }

    init(version: Int, session: String, peer: String, displayName: String, timing: TimingContract, robot: RobotID?) {
        self.version = version
        self.session = session
        self.peer = peer
        self.displayName = displayName
        self.timing = timing
        self.robot = robot
    }

    /// The TXT record, keys in the documented order. A display name too long for one TXT string
    /// is shortened (on a character boundary) rather than refused.
    package var txtRecord: TXTRecord {
        var txt = TXTRecord()
        // Keys are valid constants and every value is bounded, so these cannot throw; `try?`
        // keeps that an invariant rather than a crash.
        try? txt.set("v", String(version))
        try? txt.set("session", session)
        try? txt.set("peer", Self.fit(peer, in: 255 - "peer=".utf8.count))
        try? txt.set("name", Self.fit(displayName, in: 255 - "name=".utf8.count))
        try? txt.set("failsafe", String(timing.failsafeMilliseconds))
        try? txt.set("rate", String(timing.rateHz))
        if let robot { try? txt.set("robot", robot.text) }
        return txt
    }

    /// Reads an announcement out of a TXT record. Missing or broken `failsafe`/`rate` fall back
    /// to ``TimingContract/standard`` with a note; a missing or foreign `v`, or no `session`,
    /// make the record unusable. The texts meant for people (`peer`, `name`) come out with their
    /// control characters escaped (``DisplayText``): they may be shown or logged anywhere. The
    /// session stays as it came, to be compared byte for byte.
    package static func read(_ txt: TXTRecord) -> AnnouncementReading {
        guard let vText = txt.text("v") else { return .unusable("no protocol version (TXT v=)") }
        guard let version = Int(vText) else { return .unusable("protocol version \"\(vText)\" is not a number") }
        guard version == protocolVersion else {
            return .unusable("speaks protocol version \(version); this build speaks \(protocolVersion)")
        }
        guard let session = txt.text("session") else { return .unusable("no session (TXT session=)") }
        var notes: [String] = []
        var timing = TimingContract.standard
        func number(_ key: String, in range: ClosedRange<Int>, default value: Int) -> Int {
            guard let text = txt.text(key) else {
                notes.append("no \(key)=, assuming \(value)")
                return value
            }
            guard let n = Int(text), range.contains(n) else {
                notes.append("\(key)=\(text) is not a number in \(range.lowerBound)...\(range.upperBound), assuming \(value)")
                return value
            }
            return n
        }
        timing.failsafe = FailsafeTimeout(milliseconds: number("failsafe", in: FailsafeTimeout.announcedRange,
                                                               default: TimingContract.standard.failsafeMilliseconds))
        timing.rateHz = number("rate", in: SendRate.announcedRange, default: TimingContract.standard.rateHz)
        let announcement = ReceiverAnnouncement(version: version, session: session,
                                                peer: DisplayText.sanitised(txt.text("peer") ?? ""),
                                                displayName: DisplayText.sanitised(txt.text("name") ?? ""), timing: timing,
                                                robot: txt.text("robot").flatMap { RobotID($0) })
        return .usable(announcement, notes: notes)
    }

    static func fit(_ s: String, in bytes: Int) -> String {
        if s.utf8.count <= bytes { return s }
        var out = ""
        for ch in s {
            if out.utf8.count + String(ch).utf8.count > bytes { break }
            out.append(ch)
        }
        return out
    }
}

package enum AnnouncementReading: Equatable, Sendable {
    /// Usable; `notes` say what was assumed (e.g. a missing `rate`).
    case usable(ReceiverAnnouncement, notes: [String])
    /// Not a receiver this build can drive; the reason is one short phrase.
    case unusable(String)
}
