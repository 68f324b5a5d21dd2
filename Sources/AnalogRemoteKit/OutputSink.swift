import Receiver
import Synchronization

/// The board a ``RobotReceiver`` drives: an in-memory kit map whose every change becomes a
/// ``RobotOutput`` for the program's code. Called from the receive loop's thread.
final class OutputSink: BoardSink {
    private let map = Mutex([UInt8](repeating: 0, count: KitProfile.size))
    private let mapping: Mapping
    private let outputs: Broadcast<RobotOutput>

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
}
