import BoardProtocol
import Receiver
import Synchronization
import SystemIO

/// The board a ``RobotReceiver`` drives: an in-memory kit map whose every change becomes a
/// ``RobotOutput`` for the program's code. Called from the receive loop's thread.
final class OutputSink: BoardSink {
    private let map = Mutex([UInt8](repeating: 0, count: KitProfile.size))
    private let mapping: Mapping
    private let outputs: Broadcast<RobotOutput>
    /// What the program's robot senses (``RobotReceiver/report(_:)``), once the receive loop's
    /// inbox is known (``attach(_:)``).
    private let feed = Mutex<SensorFeed?>(nil)

    init(mapping: Mapping, outputs: Broadcast<RobotOutput>) {
        self.mapping = mapping
        self.outputs = outputs
        outputs.setReplay([.rest])
    }

    func setDesired(_ values: [UInt8: UInt8]) {
        publish(values, safe: false)
    }

    func writeSafeState(timeout: Duration) -> Bool {
        var rest: [UInt8: UInt8] = [:]
        for address in [mapping.drive.left.address, mapping.drive.right.address] { rest[address] = 0 }
        publish(rest, safe: true)
        return true
    }

    private func publish(_ values: [UInt8: UInt8], safe: Bool) {
        let output = map.withLock { m -> RobotOutput? in
            var changed = false
            for (address, value) in values where Int(address) < m.count && m[Int(address)] != value {
                m[Int(address)] = value
                changed = true
            }
            return changed || safe ? RobotOutput(map: m, mapping: mapping, safe: safe) : nil
        }
        guard let output else { return }
        outputs.setReplay([output])
        outputs.yield(output)
    }

    /// Readings from now on wake the receive loop through its board-event inbox.
    func attach(_ inbox: BoardEventInbox) {
        feed.withLock { $0 = SensorFeed { inbox.wake() } }
    }

    /// A reading from the program's robot (any thread).
    func report(_ block: SensorBlock) {
        feed.withLock { $0 }?.take(block)
    }

    var sensors: (block: SensorBlock, serial: UInt64)? { feed.withLock { $0 }?.latest }
}
