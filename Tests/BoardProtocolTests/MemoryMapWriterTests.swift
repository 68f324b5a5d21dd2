import BoardProtocol
import PropertyBased
import TestSupport
import Testing

@Suite struct MemoryMapProfileTests {
    @Test func theKitProfile() {
        let kit = MemoryMapProfile.kit
        #expect(kit.size == 36)
        #expect((kit.motorLeft, kit.motorRight, kit.led1, kit.led2, kit.buzzerTone, kit.buzzerTime) == (0x22, 0x23, 0x0F, 0x10, 0x09, 0x0A))
        #expect(kit.safeState == [0x22: 0, 0x23: 0, 0x0F: 0, 0x10: 0, 0x09: 0, 0x0A: 0])
        #expect(kit.problem == nil)
        #expect(kit.motors(left: -127, right: 127) == [0x22: 0x81, 0x23: 0x7F])
    }

    @Test func problemsAreNamed() {
        #expect(MemoryMapProfile(size: 34).problem == "motor-left address 0x22 is outside the 34-byte memory map")
        #expect(MemoryMapProfile(led2: 0x0F).problem == "led1 and led2 share address 0x0f")
        #expect(MemoryMapProfile(size: 0).problem == "memory map size 0 is not in 1…256")
    }
}

@Suite struct MemoryMapWriterTests {
    let kit = MemoryMapProfile.kit

    /// Runs the writer against a perfect board until it has nothing to send; returns the commands.
    func drain(_ w: inout MemoryMapWriter) -> [BoardCommand] {
        var sent: [BoardCommand] = []
        while let c = w.nextCommand() {
            sent.append(c)
            w.succeeded()
        }
        return sent
    }

    @Test func nothingIsSentWhileTheLinkIsDown() {
        var w = MemoryMapWriter(profile: kit)
        w.setDesired([0x22: 5])
        #expect(w.nextCommand() == nil)
    }

    @Test func theSafeStateGoesFirstInContiguousRunsThenTheDesiredValues() {
        var w = MemoryMapWriter(profile: kit)
        w.setDesired([0x22: 0xC0, 0x23: 0x40])
        w.connected()
        #expect(w.isWritingSafeState)
        #expect(drain(&w) == [
            .write(address: 0x09, bytes: [0, 0]),
            .write(address: 0x0F, bytes: [0, 0]),
            .write(address: 0x22, bytes: [0, 0]),
            .write(address: 0x22, bytes: [0xC0, 0x40]),
        ])
        #expect(!w.isWritingSafeState && w.isSettled)
    }

    @Test func onlyChangedAddressesAreSentAndContiguousOnesMerge() {
        var w = MemoryMapWriter(profile: kit)
        w.connected()
        _ = drain(&w)
        w.setDesired([0x22: 0, 0x23: 0, 0x0F: 0])
        #expect(w.nextCommand() == nil, "already confirmed")
        w.setDesired([0x0F: 1, 0x10: 2, 0x11: 3, 0x23: 9])
        #expect(drain(&w) == [.write(address: 0x0F, bytes: [1, 2, 3]), .write(address: 0x23, bytes: [9])])
    }

    @Test func atMostOneCommandIsOutstandingAndTheLatestValueWins() {
        var w = MemoryMapWriter(profile: kit)
        w.connected()
        _ = drain(&w)
        w.setDesired([0x22: 1])
        #expect(w.nextCommand() == .write(address: 0x22, bytes: [1]))
        for v in 2...50 as ClosedRange<UInt8> { w.setDesired([0x22: v]) }
        #expect(w.nextCommand() == nil, "one outstanding")
        w.succeeded()
        #expect(w.nextCommand() == .write(address: 0x22, bytes: [50]), "intermediate 2…49 skipped")
        w.succeeded()
        #expect(w.isSettled && w.confirmed[0x22] == 50)
    }

    @Test func aFailedWriteIsSentAgainWithTheLatestValue() {
        var w = MemoryMapWriter(profile: kit)
        w.connected()
        _ = drain(&w)
        w.setDesired([0x22: 7])
        _ = w.nextCommand()
        w.setDesired([0x22: 8])
        w.failed()
        #expect(w.confirmed[0x22] == nil)
        #expect(w.nextCommand() == .write(address: 0x22, bytes: [8]))
    }

    @Test func aFailedWriteToItsOldValueIsSentAgainToo() {
        var w = MemoryMapWriter(profile: kit)
        w.connected()
        _ = drain(&w)
        w.setDesired([0x22: 7])
        _ = w.nextCommand()
        w.setDesired([0x22: 0])   // back to the confirmed value while 7 is on the wire
        w.failed()                // 7 may or may not have landed
        #expect(w.nextCommand() == .write(address: 0x22, bytes: [0]))
    }

    @Test func aFastAddressDoesNotStarveAnother() {
        var w = MemoryMapWriter(profile: kit)
        w.connected()
        _ = drain(&w)
        // The LED (low address) changes on every step; the motor (higher) changed once.
        var sentMotor = false
        w.setDesired([0x22: 0x40])
        for v in 1...10 as ClosedRange<UInt8> {
            w.setDesired([0x0F: v])
            if let c = w.nextCommand() {
                if case .write(0x22, _) = c { sentMotor = true }
                w.succeeded()
            }
        }
        #expect(sentMotor)
    }

    /// Found by the demo: after `W 22 00` (left only) the round-robin cursor stood at 0x23, and
    /// the next change of both motors went out as `W 23 de` then `W 22 5e` — one wheel running
    /// alone for a command's time. A contiguous changed block is always written whole.
    @Test func bothMotorsChangeInOneCommandWhateverTheCursor() {
        var w = MemoryMapWriter(profile: kit)
        w.connected()
        _ = drain(&w)
        w.setDesired([0x22: 0x81])
        #expect(drain(&w) == [.write(address: 0x22, bytes: [0x81])])
        w.setDesired([0x22: 0x00])
        #expect(drain(&w) == [.write(address: 0x22, bytes: [0x00])])
        w.setDesired([0x22: 0x5E, 0x23: 0xDE])
        #expect(drain(&w) == [.write(address: 0x22, bytes: [0x5E, 0xDE])])
    }

    @Test func reconnectingForgetsTheBoardAndWritesTheSafeStateFirstAgain() {
        var w = MemoryMapWriter(profile: kit)
        w.connected()
        _ = drain(&w)
        w.setDesired([0x22: 0x40])
        _ = w.nextCommand()
        w.disconnected()
        #expect(w.nextCommand() == nil && w.confirmed.isEmpty)
        w.setDesired([0x23: 0x40])
        w.connected()
        let sent = drain(&w)
        #expect(Array(sent.prefix(3)) == [.write(address: 0x09, bytes: [0, 0]), .write(address: 0x0F, bytes: [0, 0]), .write(address: 0x22, bytes: [0, 0])])
        #expect(sent.dropFirst(3) == [.write(address: 0x22, bytes: [0x40, 0x40])])
    }

    @Test func addressesOutsideTheMapAreIgnored() {
        var w = MemoryMapWriter(profile: kit)
        #expect(w.setDesired([0x24: 1, 0x22: 1]) == [0x24])
        #expect(w.desired == [0x22: 1])
    }

    /// Random interleavings of input, success and failure: never two commands outstanding, never
    /// an address outside the map, and once the board answers everything, confirmed == desired.
    @Test func randomInterleavingsSettleOnTheLatestDesiredValues() async {
        let kit = self.kit
        let op = Gen<Int>.int(in: 0...3)
        await propertyCheck(count: 300, input: zip(op, Gen<UInt8>.uint8(in: 0...35), Gen<UInt8>.uint8()).array(of: 0...60)) { ops in
            var w = MemoryMapWriter(profile: kit)
            w.connected()
            var outstanding = false
            for (kind, address, value) in ops {
                switch kind {
                case 0: w.setDesired([address: value])
                case 1:
                    if let c = w.nextCommand() {
                        #expect(!outstanding)
                        outstanding = true
                        if case let .write(a, bytes) = c { #expect(Int(a) + bytes.count <= kit.size) }
                    }
                case 2: if outstanding { w.succeeded(); outstanding = false }
                default: if outstanding { w.failed(); outstanding = false }
                }
                #expect(w.outstanding == nil || outstanding)
            }
            if outstanding { w.succeeded() }
            _ = drain(&w)
            #expect(w.isSettled)
            for (a, v) in w.desired { #expect(w.confirmed[a] == v) }
            for (a, v) in kit.safeState where w.desired[a] == nil { #expect(w.confirmed[a] == v) }
        }
    }
}
