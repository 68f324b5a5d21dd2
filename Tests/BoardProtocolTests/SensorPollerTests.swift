import BoardProtocol
import Testing

/// The link's rule on an idle link, as `LinkState.pump` applies it: the writer's command first,
/// a sensor read only when the writer has none. (The write the link may send behind a read on
/// the wire, ``MemoryMapWriter/nextChange()``, is left out here: this models the schedule.)
struct Link {
    var writer: MemoryMapWriter
    var poller: SensorPoller
    var onWire: BoardCommand?
    var log: [(at: Duration, command: BoardCommand)] = []
    let start = ContinuousClock.now

    init(profile: MemoryMapProfile = .stock, rate: Double = SensorPoller.defaultRate, verifies: Bool = false) {
        writer = MemoryMapWriter(profile: profile, verifies: verifies)
        poller = SensorPoller(rate: rate)
        writer.connected()
        poller.connected(now: start)
        // The safe state, answered before the clock starts (a verifying writer probes first).
        while !verifies, let c = writer.nextCommand() {
            log.append((.zero, c))
            writer.succeeded()
        }
    }

    /// Sends the next command if nothing is on the wire.
    mutating func pump(at t: Duration) {
        guard onWire == nil else { return }
        if let c = writer.nextCommand() ?? poller.nextCommand(writer: writer, now: start + t) {
            onWire = c
            log.append((t, c))
        }
    }

    /// The owner changes LED1 (to a new value) before every pump, one pump a millisecond over
    /// `milliseconds`, and the board answers each; `look` sees the link after each pump.
    mutating func changeBeforeEveryPump(_ milliseconds: Range<Int>, look: (Link) -> Void = { _ in }) {
        for ms in milliseconds {
            led1 &+= 1
            writer.setDesired([0x0F: led1])
            pump(at: .milliseconds(ms))
            look(self)
            answer()
        }
    }
    private var led1: UInt8 = 0

    /// The board answers the command on the wire (a read with `values`, by default bytes
    /// 0, 1, 2, … for the sensor block and zeros for any other).
    mutating func answer(_ values: [UInt8]? = nil) {
        guard let c = onWire else { return }
        onWire = nil
        if c == SensorBlock.read {
            poller.completed(.values(values ?? Array(0..<11)))
        } else if case .read(_, let count) = c {
            writer.completed(.values(values ?? [UInt8](repeating: 0, count: Int(count))))
        } else {
            writer.succeeded()
        }
    }

    var reads: [Duration] { log.filter { $0.command == SensorBlock.read }.map(\.at) }
}

@Suite struct SensorPollerTests {
    @Test func theBlockIsOneReadOfElevenBytesFrom0x07() {
        #expect(SensorBlock.read == .read(address: 0x07, count: 0x0B))
        #expect(SensorBlock.read.text == "R 07 0b")
        let block = SensorBlock(readReply: [0xFD, 45, 0, 0, 10, 20, 30, 255, 0, 0, 1])
        #expect(block == SensorBlock(sensors: [10, 20, 30, 255], switchValue: 1, temperature: -3, humidity: 45))
        #expect(block?.isSwitchPressed == true)
        // A board whose map ends inside the block answers short: not a block.
        #expect(SensorBlock(readReply: [1, 2, 3]) == nil)
    }

    @Test func readsComeAtTheRateAndNeverFaster() {
        var link = Link(rate: 10)
        for ms in 0..<1000 {
            link.pump(at: .milliseconds(ms))
            link.answer()
        }
        let reads = link.reads
        // The first after the safe state, then every 100 ms: 0, 100, …, 900.
        #expect(reads.count == 10)
        for (a, b) in zip(reads, reads.dropFirst()) { #expect(b - a >= .milliseconds(100)) }
        #expect(link.poller.latest == SensorBlock(readReply: Array(0..<11)))
    }

    @Test(arguments: [2.0, 25.0])
    func anotherRateIsHonoured(rate: Double) {
        var link = Link(rate: rate)
        for ms in 0..<2000 {
            link.pump(at: .milliseconds(ms))
            link.answer()
        }
        #expect(link.reads.count == Int(2 * rate))
    }

    @Test func rateZeroIsOff() {
        var link = Link(rate: 0)
        for ms in 0..<1000 {
            link.pump(at: .milliseconds(ms))
            link.answer()
        }
        #expect(link.reads.isEmpty)
        #expect(link.poller.deadline == nil)
    }

    @Test func aPendingWriteGoesBeforeADueRead() {
        var link = Link()
        for ms in 0..<100 { link.pump(at: .milliseconds(ms)); link.answer() }
        #expect(link.reads == [.zero])
        // At 100 ms a read is due, and the owner has just changed a value: the write goes first.
        link.writer.setDesired([0x0F: 200])
        link.pump(at: .milliseconds(100))
        #expect(link.onWire == .write(address: 0x0F, bytes: [200]))
        link.answer()
        link.pump(at: .milliseconds(101))
        #expect(link.onWire == SensorBlock.read)
    }

    @Test func aReadWaitsWhileWritesKeepComingAndThenDoesNotBurst() {
        var link = Link()
        link.pump(at: .zero); link.answer()
        // For 500 ms the owner changes LED1 before every pump: no read gets out.
        link.changeBeforeEveryPump(1..<500) { #expect($0.onWire != SensorBlock.read) }
        #expect(link.reads == [.zero])
        // Then it is idle: one read at once, and the next one an interval later, not five.
        for ms in 500..<700 { link.pump(at: .milliseconds(ms)); link.answer() }
        #expect(link.reads == [.zero, .milliseconds(500), .milliseconds(600)])
    }

    @Test func aReadHeldBackByWritesDelaysTheNextOneToo() {
        var link = Link()
        link.pump(at: .zero); link.answer()
        // At 100 ms a read is due, but the owner changes LED1 before every pump until 187 ms
        // (a kit board's connect sequence held the first read back so, 87 ms): the read goes out
        // at 187 ms, and the next one an interval after that — not 13 ms later at 200 ms.
        link.changeBeforeEveryPump(1..<187)
        for ms in 187..<400 { link.pump(at: .milliseconds(ms)); link.answer() }
        #expect(link.reads == [.zero, .milliseconds(187), .milliseconds(287), .milliseconds(387)])
    }

    @Test func nothingIsReadBeforeTheSafeStateOrWhileACommandIsOutstanding() {
        var link = Link(profile: .stock, verifies: true)
        // The probe, then the safe state and its read-backs: none of them is the sensor read.
        link.pump(at: .zero)
        #expect(link.onWire == BoardIdentity.probe)
        #expect(link.poller.nextCommand(writer: link.writer, now: link.start + .seconds(1)) == nil)
        link.answer([1, 1] + [UInt8](repeating: 0, count: 32))
        link.writer.identified(profile: .stock)
        var ms = 1
        while link.reads.isEmpty && ms < 100 {
            link.pump(at: .milliseconds(ms))
            if link.onWire != SensorBlock.read {
                #expect(link.poller.nextCommand(writer: link.writer, now: link.start + .seconds(1)) == nil)
            }
            link.answer()
            ms += 1
        }
        let firstRead = link.log.firstIndex { $0.command == SensorBlock.read }
        let lastWrite = link.log.lastIndex { if case .write = $0.command { true } else { false } }
        #expect(firstRead != nil && lastWrite != nil && firstRead! > lastWrite!)
    }

    @Test func aFirmwareWithoutTheBlockIsNeverRead() {
        var noBlock = MemoryMapProfile.stock
        noBlock.hasSensorBlock = false
        var link = Link(profile: noBlock)
        for ms in 0..<500 { link.pump(at: .milliseconds(ms)); link.answer() }
        #expect(link.reads.isEmpty)
        // Nor a board whose probed map ends before 0x11.
        var small = Link(profile: .stock, verifies: true)
        small.pump(at: .zero)
        small.answer([1, 1] + [UInt8](repeating: 0, count: 14))   // a 16-byte map
        small.writer.identified(profile: MemoryMapProfile(name: "tiny", size: 16, motorLeft: nil, motorRight: nil,
                                                           led1: 0x0F, led2: 0x0E, buzzerTone: 0x09, buzzerTime: 0x0A))
        for ms in 1..<500 { small.pump(at: .milliseconds(ms)); small.answer() }
        #expect(small.reads.isEmpty)
    }

    @Test func aFailedReadIsNotRepeatedAtOnce() {
        var link = Link()
        link.pump(at: .zero); link.answer()
        link.pump(at: .milliseconds(100))
        #expect(link.onWire == SensorBlock.read)
        link.poller.failed()
        link.onWire = nil
        link.pump(at: .milliseconds(101))
        #expect(link.onWire == nil)
        link.pump(at: .milliseconds(200))
        #expect(link.onWire == SensorBlock.read)
    }

    /// What may go behind a read on the wire: only a changed value — never the probe, the safe
    /// state after a connect, or a read-back — and never a second writer command.
    @Test func onlyAChangedValueMayGoBehindARead() {
        var writer = MemoryMapWriter(profile: .stock, verifies: true)
        writer.connected()
        writer.setDesired([0x0F: 9])
        #expect(writer.nextChange() == nil, "the probe is due")
        #expect(writer.nextCommand() == BoardIdentity.probe)
        writer.completed(.values([UInt8](repeating: 0, count: 0x22)))
        writer.identified(profile: .stock)
        #expect(writer.nextChange() == nil, "the safe state is due")
        let safe = writer.nextCommand()
        #expect(safe == .write(address: 0x09, bytes: [0, 0]))
        writer.succeeded()
        #expect(writer.nextChange() == nil, "its read-back is due")
        while let c = writer.nextCommand() {
            if case .read(_, let count) = c { writer.completed(.values([UInt8](repeating: 0, count: Int(count)))) } else { writer.succeeded() }
            if writer.outstanding == nil && writer.isIdleForReads { break }
        }
        #expect(writer.isIdleForReads && writer.nextChange() == nil, "settled: nothing to send")
        writer.setDesired([0x10: 7])
        #expect(writer.nextChange() == .write(address: 0x10, bytes: [7]))
        writer.setDesired([0x0F: 1])
        #expect(writer.nextChange() == nil && writer.nextCommand() == nil, "one write outstanding at most")
    }
}
