@testable import Controller
import Console
import Foundation
import RemoteWire
import SystemIO
import Testing

/// The robot's state leads the status line, survives a 60-column terminal, and is coloured only
/// when wanted (NO_COLOR honoured).
@Suite struct StatusLeadTests {
    let red = "\u{1B}[1;31m"

    func line(lead: String?) throws -> String {
        let address = try SocketAddress.resolve("192.168.100.200:27183")
        return StatusReport.line(peer: .init(address: address, label: "robot-in-room-3.local:27183"),
                                 state: ControllerState(angle: 0.5, buttons: [.forward, .a]),
                                 rate: 50, input: "keyboard", stopping: false, sendError: nil,
                                 lead: lead, extra: ["robot-1 rtt 0.4 ms loss 0%"])
    }

    @Test func theStateComesFirstAndSurvivesSixtyColumns() throws {
        let text = try line(lead: Colour.red.paint("FAILSAFE (silence): centre to resume", on: true))
        #expect(text.hasPrefix(red + "FAILSAFE (silence): centre to resume\u{1B}[0m  → robot-in-room-3.local:27183"))
        let fitted = StatusLine.fit(text, columns: 60)
        let visible = fitted.replacingOccurrences(of: red, with: "").replacingOccurrences(of: "\u{1B}[0m", with: "")
        #expect(visible.count == 59, "cut to the width, colour codes not counted: \(visible)")
        #expect(visible.hasPrefix("FAILSAFE (silence): centre to resume  → "))
        #expect(fitted.hasSuffix("\u{1B}[0m"), "a cut line ends with a colour reset")
    }

    @Test func aPlainSenderSaysNoReceiverFirst() throws {
        let address = try SocketAddress.resolve("127.0.0.1:9")
        let text = StatusReport.line(peer: .init(address: address, label: "127.0.0.1:9"), state: .neutral, rate: 50,
                                     input: "stdin", stopping: false, sendError: "no receiver at 127.0.0.1:9")
        #expect(text.hasPrefix("no receiver at 127.0.0.1:9  → 127.0.0.1:9"))
        #expect(!text.contains("send failed"))
    }

    @Test(arguments: [
        ([String: String](), true), (["NO_COLOR": "1"], false), (["NO_COLOR": ""], true), (["TERM": "dumb"], false),
    ])
    func colourFollowsNoColor(environment: [String: String], wanted: Bool) {
        #expect(Colour.wanted(enabled: true, environment: environment) == wanted)
        #expect(!Colour.wanted(enabled: false, environment: environment), "no status line, no colour")
        #expect(Colour.red.paint("X", on: false) == "X")
    }
}
