import Discovery
import RemoteWire
import SystemIO
import Testing

/// What DNS-SD hands us is anyone's text (issue 25, item 5): an instance name or TXT value with
/// ESC or a newline comes out of discovery escaped, as control-message names do (DisplayText),
/// so it can forge no log line and drive no terminal. The robot id travels in TXT `robot=`.
@Suite struct DiscoveredTextTests {
    let clock = Clock()
    static let hostile = "robot\u{1B}[2J\nnotice: forged line\u{202E}"
    static let escaped = "robot\\u{1B}[2J\\u{A}notice: forged line\\u{202E}"

    @Test func anInstanceNameAndTXTValuesWithControlCharactersComeOutEscaped() throws {
        var d = ReceiverDirectory(session: session())
        var r = FakeReceiver(name: Self.hostile)
        r.peer = "peer\u{7}\u{1B}]0;title\u{7}"
        var changes: [DirectoryChange] = []
        for e in r.appears { changes += d.apply(e, now: clock.at(0)) }
        guard case .available(let got)? = changes.first else { Issue.record("not available: \(changes)"); return }
        #expect(got.name == Self.escaped)
        #expect(got.announcement.displayName == Self.escaped)
        #expect(got.announcement.peer == "peer\\u{7}\\u{1B}]0;title\\u{7}")
        #expect(got.instance == Self.hostile, "the instance name stays exact: DNS-SD calls need it")
        let line = BrowseListing.line(for: .available(got), interfaceName: { _ in "eth0" })
        #expect(!line.unicodeScalars.contains { DisplayText.needsEscape($0) }, "\(line.debugDescription)")
        #expect(d.receiver(named: Self.escaped) == got)
        // Gone: the unavailable line names it escaped too.
        #expect(d.apply(r.leaves, now: clock.at(1)) == [.unavailable(name: Self.escaped)])
    }

    @Test func aForeignSessionIsNamedEscapedInTheIgnoredLine() throws {
        var d = ReceiverDirectory(session: session())
        let r = FakeReceiver(name: "x\u{1B}y", session: "other\u{1B}[31m")
        var changes: [DirectoryChange] = []
        for e in r.appears { changes += d.apply(e, now: clock.at(0)) }
        #expect(changes == [.ignored(name: "x\\u{1B}y",
                                     reason: "its session \"other\\u{1B}[31m\" is not \"KLabRemoteSample\" (same subtype: a hash collision)")])
    }

    @Test func theRobotIDTravelsInTXTAndIsShownByBrowse() throws {
        let id = try #require(RobotID("k3m9x2ab"))
        let a = ReceiverAnnouncement(session: try SessionID("KLabRemoteSample"), peer: "0123456789abcdef", displayName: "robot 1", robot: id)
        #expect(a.txtRecord.entries.map(\.key) == ["v", "session", "peer", "name", "failsafe", "rate", "robot"])
        #expect(a.txtRecord.text("robot") == "k3m9x2ab")
        let txt = try #require(TXTRecord.decode(a.txtRecord.encoded))
        #expect(ReceiverAnnouncement.read(txt) == .usable(a, notes: []))
        var broken = txt
        try broken.set("robot", "not-an-id")
        guard case .usable(let read, _) = ReceiverAnnouncement.read(broken) else { Issue.record("unusable"); return }
        #expect(read.robot == nil, "a robot= that is no robot id counts as absent")

        let found = DiscoveredReceiver(name: "robot 1", announcement: a, host: "h.local.", port: 1,
                                       addresses: [try SocketAddress.resolve("198.18.0.1:1")], interfaces: [1], notes: [])
        #expect(BrowseListing.describe(found, interfaceName: { _ in "eth0" }).contains(" rate=50 robot=k3m9x2ab if=eth0"))
    }
}
