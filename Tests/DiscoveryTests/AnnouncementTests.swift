import Discovery
import Testing

@Suite struct AnnouncementTests {
    @Test func receiverTXTCarriesTheDocumentedKeysInOrder() throws {
        let a = ReceiverAnnouncement(session: try SessionID("KLabRemoteSample"), peer: "0123456789abcdef",
                                     displayName: "robot 1")
        #expect(a.txtRecord.entries.map(\.key) == ["v", "session", "peer", "name", "failsafe", "rate"])
        let expected = [3] + Array("v=1".utf8) + [24] + Array("session=KLabRemoteSample".utf8)
            + [21] + Array("peer=0123456789abcdef".utf8) + [12] + Array("name=robot 1".utf8)
            + [12] + Array("failsafe=250".utf8) + [7] + Array("rate=50".utf8)
        #expect(a.txtRecord.encoded == expected)
    }

    @Test func readsBackWhatItWrites() throws {
        let a = ReceiverAnnouncement(session: try SessionID("3年B組 チーム2"), peer: PeerID.random(),
                                     displayName: "ロボ", timing: TimingContract(failsafeMilliseconds: 400, rateHz: 20))
        let txt = try #require(TXTRecord.decode(a.txtRecord.encoded))
        #expect(ReceiverAnnouncement.read(txt) == .usable(a, notes: []))
    }

    @Test func handAnnouncedRecordWithoutTimingGetsTheStandardContractAndNotes() throws {
        var txt = TXTRecord()
        try txt.set("v", "1")
        try txt.set("session", "KLabRemoteSample")
        try txt.set("rate", "fast")
        guard case .usable(let a, let notes) = ReceiverAnnouncement.read(txt) else {
            Issue.record("not usable"); return
        }
        #expect(a.timing == .standard)
        #expect(a.peer == "" && a.displayName == "")
        #expect(notes == ["no failsafe=, assuming 250", "rate=fast is not a number in 1...10000, assuming 50"])
    }

    @Test(arguments: [
        ([], "no protocol version (TXT v=)"),
        (["v=x"], "protocol version \"x\" is not a number"),
        (["v=2", "session=s"], "speaks protocol version 2; this build speaks 1"),
        (["v=1"], "no session (TXT session=)"),
    ])
    func unusableRecordsSayWhy(items: [String], reason: String) throws {
        var txt = TXTRecord()
        for item in items {
            let parts = item.split(separator: "=", maxSplits: 1)
            try txt.set(String(parts[0]), String(parts[1]))
        }
        #expect(ReceiverAnnouncement.read(txt) == .unusable(reason))
    }

    @Test func overlongDisplayNameIsShortenedNotRefused() throws {
        let a = ReceiverAnnouncement(session: try SessionID("s"), peer: "p", displayName: String(repeating: "組", count: 100))
        let name = try #require(a.txtRecord.text("name"))
        #expect(name.utf8.count <= 250 && name.allSatisfy { $0 == "組" })
        #expect(a.txtRecord.encoded.count > 250)
    }
}
