import BoardLink
import BoardProtocol
import ControlPlane
import DriveRecord
import RemoteWire
import SystemIO

/// What the receive loop tells its ``BlackBox`` (`--black-box DIR`): each step's applied state
/// (when it changed), board values and notices; board link events; and when to write.
extension ReceiverService {
    /// After every engine step (``apply(_:)``). Costs a comparison when nothing changed.
    func recordBlackBox(_ step: ReceiverEngine<SocketAddress>.Step) {
        guard let box = blackBox else { return }
        let applied = engine.applied.map { (angle: $0.angle, buttons: $0.buttons.rawValue) }
        let changed = step.write != nil || !step.notices.isEmpty || applied?.angle != box.lastApplied?.angle
            || applied?.buttons != box.lastApplied?.buttons
        guard changed else { return }
        let now = ContinuousClock.now
        if let applied, applied.angle != box.lastApplied?.angle || applied.buttons != box.lastApplied?.buttons {
            box.append(.state(angle: applied.angle, buttons: applied.buttons), at: now)
        }
        box.lastApplied = applied
        if let values = step.write {
            box.append(.board(values.sorted { $0.key < $1.key }.map { BoardValue(address: $0.key, value: $0.value) }), at: now)
        }
        for notice in step.notices {
            switch notice {
            case .tookOwnership(let source, _):
                box.append(.owner(plane.displayName(of: source) ?? source.description), at: now)
            case .ownerSilent, .ownerLeft:
                box.append(.owner(nil), at: now)
            case .failsafe(let reason):
                box.append(.failsafe(cause: reason == .boardLink ? "board-link" : reason.rawValue), at: now)
                box.write("failsafe", at: now, automatic: true)
            case .resumed:
                box.append(.resumed, at: now)
            case .teacher(let stopped):
                box.append(.teacher(stopped: stopped), at: now)
                if stopped { box.write("teacher stop", at: now, automatic: true) }
            default:
                break
            }
        }
    }

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
