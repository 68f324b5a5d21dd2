import Receiver
import Testing

/// The line a receiver leaves after each reload for `analog-remote reload` (ReloadReceipt.swift).
@Suite struct ReloadReceiptTests {
    @Test func aReceiptReadsBackAsWritten() {
        let receipt = ReloadReceipt(pid: 4711, count: 3, outcome: .refused, text: "map: no file\n/etc/x.toml")
        #expect(receipt.line == "4711 3 refused map: no file /etc/x.toml\n")
        #expect(ReloadReceipt(line: receipt.line) == ReloadReceipt(pid: 4711, count: 3, outcome: .refused, text: "map: no file /etc/x.toml"))
        #expect(ReloadReceipt(line: "4711 1 applied") == ReloadReceipt(pid: 4711, count: 1, outcome: .applied, text: ""))
        for bad in ["", "4711", "x 1 applied ok", "4711 0 applied ok", "4711 1 done ok", "-1 1 applied ok"] {
            #expect(ReloadReceipt(line: bad) == nil, "\(bad)")
        }
    }
}
