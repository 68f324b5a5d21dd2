import ControlWire
import Foundation
import RemoteWire

/// What the server tells a page: one JSON object per WebSocket text message.
///
/// ```
/// {"t":"robots","robots":[{"id":"r1","name":"robot 1","address":"127.0.0.1:5000","driver":"Ann"}]}
/// {"t":"joined","robot":"r1","name":"robot 1"}
/// {"t":"status","link":"driving","receiver":"robot 1","rtt":1.2,"loss":0,"sent":120}
/// {"t":"robot","state":"failsafe","text":"FAILSAFE (silence): centre to resume","level":"bad"}
/// {"t":"sensors","sensors":{"humidity":40,"sensor1":12,"sensor2":34,"sensor3":0,"sensor4":255,"switch":1,"temperature":-2}}
/// {"t":"ended","text":"the page was hidden: sent neutral and stopped"}
/// {"t":"error","text":"name: the name \"Ann\" is taken: pick another"}
/// {"t":"roster","text":"The roster gives you robot 1."}

/// ```
///
/// `link` is where this controller's hello stands: `connecting` (no answer yet), `driving`
/// (accepted), `unanswered` (an older receiver without control messages: states flow anyway),
/// `refused`. `rtt` is in milliseconds, `loss` 0…1; both absent until measured. `robotState` true:
/// the receiver reports what the robot does for this controller (`robot` messages, Protocol.md
/// §7.9), and the page shows that instead of the link phase. `robot`: that report's state name,
/// the headline a driver sees, and its level (`ok`, `warn`, `bad`, or empty).
package enum PageReport: Equatable, Sendable {
    package struct Robot: Codable, Equatable, Sendable {
        package var id: String
        package var name: String
        package var address: String
        /// The name of the phone of this server that drives it, if any.
        package var driver: String?

        package init(id: String, name: String, address: String, driver: String? = nil) {
            self.id = id
            self.name = name
            self.address = address
            self.driver = driver
        }
    }

    package struct Status: Codable, Equatable, Sendable {
        package var link: String
        package var receiver: String?
        package var rtt: Double?
        package var loss: Double?
        /// State packets sent so far.
        package var sent: Int?
        /// True once the receiver has sent a robot-state report (the page then shows that).
        package var robotState: Bool?

        package init(link: String, receiver: String? = nil, rtt: Double? = nil, loss: Double? = nil, sent: Int? = nil,
                    robotState: Bool? = nil) {
            self.link = link
            self.receiver = receiver
            self.rtt = rtt
            self.loss = loss
            self.sent = sent
            self.robotState = robotState
        }
    }

    case robots([Robot])
    case joined(robot: String, name: String)
    case status(Status)
    /// The receiver's robot-state report for this controller: state name, headline, level.
    case robot(state: String, text: WireText, level: String)
    /// What the robot senses, as its receiver reports it to this controller (Protocol.md
    /// §7.9.1): the board's raw values by name (``RobotSensors/fields``).
    case sensors(RobotSensors)
    case ended(String)
    case error(String)
    /// With `web --roster`: what the robot list means for this page (shown where the list is).
    case roster(String)

    private struct Wire: Encodable {
        var t: String
        var robots: [Robot]?
        var robot: String?
        var name: String?
        var text: String?
        var link: String?
        var receiver: String?
        var rtt: Double?
        var loss: Double?
        var sent: Int?
        var robotState: Bool?
        var state: String?
        var level: String?
        var sensors: [String: Int]?
    }

    /// The JSON text the page parses.
    package var json: String {
        var w = Wire(t: "")
        switch self {
        case .robots(let list): w.t = "robots"; w.robots = list
        case .joined(let robot, let name): w.t = "joined"; w.robot = robot; w.name = name
        case .status(let s):
            w.t = "status"; w.link = s.link; w.receiver = s.receiver; w.sent = s.sent; w.robotState = s.robotState
            w.rtt = s.rtt.map { ($0 * 10).rounded() / 10 }
            w.loss = s.loss.map { ($0 * 100).rounded() / 100 }
        case .robot(let state, let text, let level): w.t = "robot"; w.state = state; w.text = text.text; w.level = level
        case .sensors(let s): w.t = "sensors"; w.sensors = Dictionary(uniqueKeysWithValues: s.fields.map { ($0.name, $0.value) })
        case .ended(let text): w.t = "ended"; w.text = text
        case .error(let text): w.t = "error"; w.text = text
        case .roster(let text): w.t = "roster"; w.text = text
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(w), let text = String(data: data, encoding: .utf8) else {
            return #"{"t":"error","text":"internal: cannot encode a report"}"#
        }
        return text
    }
}
