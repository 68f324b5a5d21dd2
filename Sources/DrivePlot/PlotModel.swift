import DriveRecord
import Receiver
import RemoteWire

/// What a recording shows, as series over time (seconds since the recording's t = 0): the tilt,
/// each button's held intervals, the wheel speeds the receiver's mapping makes of the states
/// (``Mapping/wheelSpeeds(for:)``, the code the receiver drives with), round-trip time and loss,
/// and the events worth a mark. Pure: ``PlotSVG`` draws it.
package struct PlotModel: Sendable {
    package struct Point: Sendable, Equatable {
        package var t: Double
        package var value: Double
    }

    package struct Band: Sendable, Equatable {
        package var name: String
        package var intervals: [(start: Double, end: Double)]
        package static func == (a: Band, b: Band) -> Bool {
            a.name == b.name && a.intervals.elementsEqual(b.intervals) { $0.start == $1.start && $0.end == $1.end }
        }
    }

    package enum Kind: String, Sendable, CaseIterable {
        case failsafe, owned, teacher, board, note
    }

    package struct Event: Sendable, Equatable {
        package var t: Double
        package var kind: Kind
        package var label: String

        package init(t: Double, kind: Kind, label: String) {
            self.t = t
            self.kind = kind
            self.label = label
        }
    }

    /// Tilt in degrees (positive = right), as steps.
    package var tilt: [Point] = []
    package var buttons: [Band] = []
    package var left: [Point] = []
    package var right: [Point] = []
    /// The mapping's full speed (the wheels' scale).
    package var speed: Int
    package var roundTrip: [Point] = []
    /// Loss in percent.
    package var loss: [Point] = []
    package var events: [Event] = []
    /// Sensors 1–4 (0…255) as steps, from `sensors` entries; empty when the recording has none.
    package var sensors: [[Point]] = [[], [], [], []]
    /// When the robot's switch was pressed.
    package var switchPressed: [(start: Double, end: Double)] = []
    /// When the robot did not drive what was sent: a failsafe, a teacher's stop, another owner,
    /// a missing board (from the robot's reports, or a black box's own events).
    package var held: [(start: Double, end: Double)] = []
    package var start: Double
    package var end: Double
    package let header: RecordHeader

    package init(_ recording: Recording, mapping: Mapping = .kit) {
        header = recording.header
        speed = mapping.drive.speed
        start = recording.entries.first?.seconds ?? 0
        end = max(recording.entries.last?.seconds ?? 0, start + 0.001)
        var pressed: [String: Double] = [:]
        var intervals: [String: [(Double, Double)]] = [:]
        var lastRobot: String?
        var switchSince: Double?
        var heldSince: Double?
        func hold(_ t: Double, _ on: Bool) {
            if on, heldSince == nil { heldSince = t }
            if !on, let since = heldSince { self.held.append((since, t)); heldSince = nil }
        }
        func wheels(_ t: Double, _ l: Int, _ r: Int) {
            if left.last?.value != Double(l) || right.last?.value != Double(r) {
                left.append(Point(t: t, value: Double(l)))
                right.append(Point(t: t, value: Double(r)))
            }
        }
        for entry in recording.entries {
            let t = entry.seconds
            switch entry.event {
            case .state(let angle, let bits):
                let state = ControllerState(angle: angle, buttons: Buttons(rawValue: bits).intersection(.defined))
                let degrees = Double(angle) * 180 / Double.pi
                if tilt.last?.value != degrees { tilt.append(Point(t: t, value: degrees)) }
                for (name, button) in Buttons.names {
                    let on = state.buttons.contains(button)
                    if on, pressed[name] == nil { pressed[name] = t }
                    if !on, let since = pressed.removeValue(forKey: name) { intervals[name, default: []].append((since, t)) }
                }
                let w = mapping.wheelSpeeds(for: state)
                wheels(t, w.left, w.right)
            case .robot(let state, let detail):
                guard state != lastRobot else { break }
                lastRobot = state
                hold(t, state != "driving")
                switch state {
                case "failsafe" where detail == "teacher-release":
                    events.append(Event(t: t, kind: .teacher, label: "teacher release"))
                case "failsafe" where detail != "startup" && detail != "released":
                    events.append(Event(t: t, kind: .failsafe, label: "failsafe (\(detail))"))
                case "owned": events.append(Event(t: t, kind: .owned, label: detail.isEmpty ? "owned" : "owned by \(detail)"))
                case "teacher-stop": events.append(Event(t: t, kind: .teacher, label: "teacher stop"))
                case "board-missing": events.append(Event(t: t, kind: .board, label: "board missing"))
                case "refused": events.append(Event(t: t, kind: .owned, label: "refused"))
                default: break
                }
            case .link(let rtt, let lossRate):
                if let rtt { roundTrip.append(Point(t: t, value: rtt)) }
                if let lossRate { loss.append(Point(t: t, value: lossRate * 100)) }
            case .owner(let who):
                events.append(Event(t: t, kind: .owned, label: who.map { "owner \($0)" } ?? "owner left"))
            case .failsafe(let cause):
                events.append(Event(t: t, kind: .failsafe, label: "failsafe (\(cause))"))
                wheels(t, 0, 0)   // the receiver stopped the motors
                hold(t, true)
            case .resumed:
                events.append(Event(t: t, kind: .note, label: "resumed"))
                hold(t, false)
            case .teacher(let stopped):
                events.append(Event(t: t, kind: .teacher, label: stopped ? "teacher stop" : "teacher release"))
                if stopped { wheels(t, 0, 0) }
                hold(t, stopped)
            case .boardLink(let up, _):
                events.append(Event(t: t, kind: .board, label: up ? "board up" : "board lost"))
            case .mark(let text):
                events.append(Event(t: t, kind: .note, label: "written: \(text)"))
            case .end(let reason):
                events.append(Event(t: t, kind: .note, label: "end: \(reason)"))
            case .sensors(let v):
                for i in 0..<4 where sensors[i].last?.value != Double(v.sensors[i]) {
                    sensors[i].append(Point(t: t, value: Double(v.sensors[i])))
                }
                if v.switchValue != 0, switchSince == nil { switchSince = t }
                if v.switchValue == 0, let since = switchSince { switchPressed.append((since, t)); switchSince = nil }
            case .board:
                break
            }
        }
        if let since = switchSince { switchPressed.append((since, end)) }
        for (name, since) in pressed { intervals[name, default: []].append((since, end)) }
        if let since = heldSince { self.held.append((since, end)) }
        buttons = Buttons.names.compactMap { b in intervals[b.name].map { Band(name: b.name, intervals: $0) } }
    }
}
