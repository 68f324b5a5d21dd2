import BoardLink
import BoardProtocol
import ControlPlane
import DriveRecord
import RemoteWire
import SystemIO

/// What the receive loop tells its ``BlackBox`` (`--black-box DIR`) besides what the machine asks
/// (``ReceiverAction/record(_:)``): board link events, SIGUSR1, and the write at exit.
extension ReceiverService {
    /// Each loop turn: the board's sensor block, when it changed since the last one kept.
    func recordBlackBoxSensors() {
        guard let box = blackBox, let block = board.sensors?.block, block != box.lastSensors else { return }
        box.lastSensors = block
        box.append(.sensors(SensorValues(sensors: block.sensors, switchValue: block.switchValue, temperature: block.temperature,
                                         humidity: block.humidity)), at: .now)
    }

    func recordBlackBox(_ event: BoardEvent) {
        guard let box = blackBox else { return }
        let now = ContinuousClock.now
        switch event {
        case .connected(let device): box.append(.boardLink(up: true, text: "connected \(device)"), at: now)
        case .reconnected(let device): box.append(.boardLink(up: true, text: "reconnected \(device)"), at: now)
        case .disconnected(let device, let reason):
            box.append(.boardLink(up: false, text: "\(device): \(reason)"), at: now)
            box.write("board lost", at: now, automatic: true)
        case .refused(let device, let reason):
            box.append(.boardLink(up: false, text: "\(device) refused: \(reason)"), at: now)
            box.write("board refused", at: now, automatic: true)
        }
    }

    /// The loop's extra descriptor (SIGUSR1), after all the others.
    var blackBoxDescriptors: [(fd: Int32, events: Poller.Events)] {
        blackBox.map { [($0.request.descriptor.rawValue, .readable)] } ?? []
    }

    /// After a wake-up: SIGUSR1 asked for a black box.
    func serviceBlackBox(_ ready: [Poller.Events]) {
        guard let box = blackBox, let last = ready.last, !last.isEmpty, box.takeRequest() else { return }
        box.write("SIGUSR1", at: .now)
    }

    /// On the way out, after the safe state: the last black box, written before exit.
    func closeBlackBox() {
        blackBox?.write("exit", at: .now, wait: true)
    }
}
