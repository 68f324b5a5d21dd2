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

@Suite struct SendCadenceTests {
    @Test func standardContractGivesFiftyHertzBoundByTheReceiver() {
        let plan = SendCadence.plan(requestedRateHz: nil, receiver: .standard)
        #expect(plan.period == .milliseconds(20))
        #expect(plan.boundBy == .receiverRate)
        #expect(plan.honoursFailsafe)
        #expect(plan.rateHz == 50)
    }

    @Test func neverSlowerThanTheUsersRate() {
        let plan = SendCadence.plan(requestedRateHz: 100, receiver: .standard)
        #expect(plan.period == .milliseconds(10) && plan.boundBy == .requestedRate)
    }

    @Test func aShortFailsafeSpeedsTheControllerUp() {
        // 20 Hz asked by both, but a 50 ms failsafe needs five packets in 50 ms.
        let plan = SendCadence.plan(requestedRateHz: 20, receiver: TimingContract(failsafeMilliseconds: 50, rateHz: 20))
        #expect(plan.period == .milliseconds(10) && plan.boundBy == .failsafe && plan.honoursFailsafe)
    }

    @Test func theReceiversRateWinsOverASlowerRequest() {
        let plan = SendCadence.plan(requestedRateHz: 10, receiver: TimingContract(failsafeMilliseconds: 1000, rateHz: 30))
        #expect(plan.boundBy == .receiverRate && plan.rateHz == 30)
    }

    @Test func noReceiverAndNoRequestMeansFiftyHertz() {
        let plan = SendCadence.plan(requestedRateHz: nil, receiver: nil)
        #expect(plan.period == .milliseconds(20) && plan.boundBy == .standard && plan.honoursFailsafe)
    }

    @Test func anImpossibleFailsafeHitsTheFloorAndSaysSo() {
        let plan = SendCadence.plan(requestedRateHz: nil, receiver: TimingContract(failsafeMilliseconds: 4, rateHz: 50))
        #expect(plan.period == SendCadence.minimumPeriod && plan.boundBy == .floor)
        #expect(!plan.honoursFailsafe)
    }

    /// For every contract in range, the period stays within a fifth of the failsafe (or the plan
    /// says it cannot) and is never slower than the request or the receiver's rate.
    @Test func propertyPeriodRespectsEveryRule() {
        for failsafe in [1, 3, 10, 50, 99, 250, 1000, 60_000] {
            for rate in [1, 7, 50, 333, 10_000] {
                for request in [nil, 1, 50, 1000] as [Int?] {
                    let c = TimingContract(failsafeMilliseconds: failsafe, rateHz: rate)
                    let p = SendCadence.plan(requestedRateHz: request, receiver: c)
                    #expect(p.period >= SendCadence.minimumPeriod)
                    if p.boundBy != .floor {
                        #expect(p.period * 5 <= c.failsafe)
                        #expect(p.period <= .seconds(1) / rate)
                        if let request { #expect(p.period <= .seconds(1) / request) }
                    }
                    #expect(p.honoursFailsafe == (p.period * 5 <= c.failsafe))
                }
            }
        }
    }
}
