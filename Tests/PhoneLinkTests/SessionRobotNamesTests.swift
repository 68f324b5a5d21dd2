import Controller
import PhoneLink
import SystemIO
import Testing

/// A session's robot keeps the name DNS-SD first listed for it: a later announcement (unsigned)
/// moves it, never renames it on the students' list.
@Suite struct SessionRobotNamesTests {
    @Test func aLaterAnnouncementMovesARobotButNeverRenamesIt() throws {
        let a = try SocketAddress.resolve("127.0.0.1:27183")
        let b = try SocketAddress.resolve("127.0.0.1:27184")
        var first: [String: String] = [:]
        let listed = SessionRobots.named([.init(id: "robot1 [s]", name: "robot 1", peer: .init(address: a, label: "robot1 [s]"))], first: &first)
        #expect(listed.map(\.name) == ["robot 1"])
        let later = SessionRobots.named([.init(id: "robot1 [s]", name: "robot 2", peer: .init(address: b, label: "robot1 [s]")),
                                         .init(id: "robot2 [s]", name: "robot 2", peer: .init(address: a, label: "robot2 [s]"))], first: &first)
        #expect(later.map(\.name) == ["robot 1", "robot 2"])
        #expect(later[0].peer.address == b, "the robot moved with its announcement")
    }
}
