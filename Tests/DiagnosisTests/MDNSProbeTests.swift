import Diagnosis
import Testing

/// `doctor`'s `mdns` line (Diagnosis/MDNSProbe.swift) from what a probe found.
@Suite struct MDNSProbeTests {
    /// Machines on the LAN, none answering multicast: filtered, and the way around it is named.
    @Test func neighboursButNoAnswerSaysFilteredAndSuggestsPeers() {
        let c = MDNSProbe.check(.init(answeredBy: [], neighbours: ["198.18.0.7", "198.18.0.9"]))
        #expect(c.verdict == .warn && c.detail.contains("seems to filter multicast"), "\(c.line)")
        #expect(c.fix.contains("web --session ID --peer HOST:PORT"))
    }

    @Test func anAnswerFromAnotherMachineIsOK() {
        let c = MDNSProbe.check(.init(answeredBy: ["198.18.0.7"], neighbours: ["198.18.0.7"]))
        #expect(c.verdict == .ok && c.detail.hasPrefix("1 other machine answered"), "\(c.line)")
    }

    /// Alone on the LAN proves nothing: ok, with the hint for later.
    @Test func aloneIsNotCalledFiltered() {
        let c = MDNSProbe.check(.init(answeredBy: [], neighbours: []))
        #expect(c.verdict == .ok && c.detail.contains("--peer"), "\(c.line)")
        let e = MDNSProbe.check(.init(answeredBy: [], neighbours: [], sendError: "Network is unreachable"))
        #expect(e.verdict == .warn && e.detail.contains("Network is unreachable") && e.fix == MDNSProbe.byAddress)
    }

    @Test func theNeighbourTableKeepsCompleteEntriesOffLoopback() {
        let table = """
            IP address       HW type     Flags       HW address            Mask     Device
            198.18.0.7       0x1         0x2         aa:bb:cc:dd:ee:01     *        eth0
            198.18.0.8       0x1         0x0         00:00:00:00:00:00     *        eth0
            10.0.0.1         0x1         0x6         aa:bb:cc:dd:ee:02     *        wlan0
            127.0.0.2        0x1         0x2         aa:bb:cc:dd:ee:03     *        lo
            """
        #expect(MDNSProbe.neighbours(arpTable: table) == ["198.18.0.7", "10.0.0.1"])
    }

    @Test func theQueryAndWhatCountsAsAnAnswer() {
        let q = MDNSProbe.query
        #expect(q.prefix(12) == [0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0])
        #expect(q.suffix(5) == [0, 0, 12, 0, 1])
        #expect(!MDNSProbe.isAnswer(q), "our own query is no answer")
        var answer = q
        answer[2] = 0x84; answer[7] = 1
        #expect(MDNSProbe.isAnswer(answer))
        #expect(!MDNSProbe.isAnswer([0x84]))
    }
}
