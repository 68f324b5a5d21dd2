import Foundation

/// What the server tells a page: one JSON object per WebSocket text message.
///
/// ```
/// {"t":"robots","robots":[{"id":"r1","name":"robot 1","address":"127.0.0.1:5000","driver":"Ann"}]}
/// {"t":"joined","robot":"r1","name":"robot 1"}
/// {"t":"status","link":"driving","receiver":"robot 1","rtt":1.2,"loss":0,"sent":120}
/// {"t":"ended","text":"the page was hidden: sent neutral and stopped"}
/// {"t":"error","text":"name: the name \"Ann\" is taken: pick another"}
/// ```
///
/// `link` is where this controller's hello stands: `connecting` (no answer yet), `driving`
/// (accepted), `unanswered` (an older receiver without control messages: states flow anyway),
/// `refused`. `rtt` is in milliseconds, `loss` 0…1; both absent until measured.
public enum PageReport: Equatable, Sendable {
    public struct Robot: Codable, Equatable, Sendable {
        public var id: String
        public var name: String
        public var address: String
        /// The name of the phone of this server that drives it, if any.
        public var driver: String?

        public init(id: String, name: String, address: String, driver: String? = nil) {
            self.id = id
            self.name = name
            self.address = address
            self.driver = driver
        }
    }

    public struct Status: Codable, Equatable, Sendable {
        public var link: String
        public var receiver: String?
        public var rtt: Double?
        public var loss: Double?
        /// State packets sent so far.
        public var sent: Int?

        public init(link: String, receiver: String? = nil, rtt: Double? = nil, loss: Double? = nil, sent: Int? = nil) {
            self.link = link
            self.receiver = receiver
            self.rtt = rtt
            self.loss = loss
            self.sent = sent
        }
    }

    case robots([Robot])
    case joined(robot: String, name: String)
    case status(Status)
    case ended(String)
    case error(String)

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
    }

    /// The JSON text the page parses.
    public var json: String {
        var w = Wire(t: "")
        switch self {
        case .robots(let list): w.t = "robots"; w.robots = list
        case .joined(let robot, let name): w.t = "joined"; w.robot = robot; w.name = name
        case .status(let s):
            w.t = "status"; w.link = s.link; w.receiver = s.receiver; w.sent = s.sent
            w.rtt = s.rtt.map { ($0 * 10).rounded() / 10 }
            w.loss = s.loss.map { ($0 * 100).rounded() / 100 }
        case .ended(let text): w.t = "ended"; w.text = text
        case .error(let text): w.t = "error"; w.text = text
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(w), let text = String(data: data, encoding: .utf8) else {
            return #"{"t":"error","text":"internal: cannot encode a report"}"#
        }
        return text
    }
}
