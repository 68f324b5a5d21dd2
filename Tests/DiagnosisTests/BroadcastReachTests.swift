import Diagnosis
import RemoteWire
import SystemIO
import Testing

/// `doctor --session`'s `broadcast` line: every receiver DNS-SD lists on the default port must
/// have answered the broadcast query, matched by robot id, else by address.
@Suite struct BroadcastReachTests {
    let a = try! SocketAddress.resolve("198.18.0.2:27183")
    let b = try! SocketAddress.resolve("198.18.0.3:27183")
    let c = try! SocketAddress.resolve("198.18.0.4:40001")
    let idA = RobotID("k3m9x2ab")!

    var listed: [BroadcastReach.Listed] {
        [.init(name: "robot1", port: 27183, addresses: [a], robot: idA),
         .init(name: "robot2", port: 27183, addresses: [b], robot: nil),
         .init(name: "robot3", port: 40001, addresses: [c], robot: nil)]
    }

    @Test func everyListedReceiverOnTheDefaultPortAnsweredIsOk() {
        let v6 = try! SocketAddress.resolve("[fe80::2%1]:27183")
        let check = BroadcastReach.check(session: "class-3b", destinations: 2, listed: listed,
                                         answers: [.init(from: v6, robot: idA), .init(from: b, robot: nil)])
        #expect(check.verdict == .ok, "\(check.line)")
        #expect(check.line.contains("all 2 receivers of session \"class-3b\" on port 27183 answered"))
    }

    @Test func aListedReceiverThatNeverAnsweredIsAWarningThatNamesIt() {
        let check = BroadcastReach.check(session: "class-3b", destinations: 2, listed: listed, answers: [.init(from: a, robot: idA)])
        #expect(check.verdict == .warn)
        #expect(check.line.contains("1 of 2 receivers") && check.line.contains("\"robot2\"") && !check.line.contains("robot3"), "\(check.line)")
        #expect(check.fix.contains("client isolation"))
    }

    /// An answer from the right address under another robot id is another robot.
    @Test func anotherRobotAtTheAddressDoesNotCount() {
        let check = BroadcastReach.check(session: "class-3b", destinations: 1, listed: [listed[0]],
                                         answers: [.init(from: a, robot: RobotID("p7q2w4z9")!)])
        #expect(check.verdict == .warn)
    }

    @Test func nothingToCompareIsSkipped() {
        #expect(BroadcastReach.check(session: "s", destinations: 0, listed: listed, answers: []).verdict == .skip)
        #expect(BroadcastReach.check(session: "s", destinations: 2, listed: [listed[2]], answers: []).verdict == .skip)
    }
}
