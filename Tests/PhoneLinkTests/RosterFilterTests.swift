import Controller
import Foundation
import Logging
import PhoneLink
import Synchronization
import SystemIO
import Testing

/// `web --roster` on the phone page: each student lists and drives only the robot the roster
/// gives them; the hub refuses a join to another robot whatever the page sends.
@Suite(.serialized) struct RosterFilterTests {
    let roster = RosterFilter([("Ann", "robot 1"), ("Ben", "robot 2"), ("Cy", "p3")])

    func robot(_ id: String, _ name: String, port: UInt16 = 9) -> PhoneHub.Robot {
        .init(id: id, name: name, peer: .init(address: try! SocketAddress.resolve("127.0.0.1:\(port)"), label: name))
    }

    @Test func aStudentIsAllowedOnlyTheirRobotByNameOrIdIgnoringCase() {
        #expect(roster.allows("Ann", robot("p1", "robot 1")))
        #expect(roster.allows("ann", robot("p1", "Robot 1")))
        #expect(!roster.allows("Ann", robot("p2", "robot 2")))
        #expect(roster.allows("Cy", robot("p3", "robot 3")), "a roster may name a robot by its id")
        #expect(!roster.allows("Zed", robot("p1", "robot 1")), "a student not on the roster drives nothing")
        #expect(roster.robot(for: "BEN") == "robot 2")
        #expect(roster.robot(for: "Zed") == nil)
    }

    @Test func theRefusalSaysWhichRobotIsTheirs() {
        #expect(roster.refusal("Ann", robot("p1", "robot 1")) == nil)
        #expect(roster.refusal("Ann", robot("p2", "robot 2")) == "the roster gives Ann \"robot 1\", not \"robot 2\": drive your own robot")
        #expect(roster.refusal("Zed", robot("p2", "robot 2"))
                == "\"Zed\" is not on this class's roster: check how you spelled your name, or ask the teacher")
    }

    @Test func thePageMessageNameIsDecodedLikeAJoinsName() throws {
        #expect(try PageMessage.decode(#"{"t":"name","name":"  Ann "}"#) == .name("Ann"))
        #expect(throws: PageMessageError.badName("type your name first")) { try PageMessage.decode(#"{"t":"name","name":" "}"#) }
        #expect(PageReport.roster("The roster gives you robot 1.").json == #"{"t":"roster","text":"The roster gives you robot 1."}"#)
    }

    final class Reports: Sendable {
        let list = Mutex<[PageReport]>([])
        func add(_ r: PageReport) { list.withLock { $0.append(r) } }
        var all: [PageReport] { list.withLock { $0 } }
        var lastList: [String]? {
            all.last { if case .robots = $0 { true } else { false } }.flatMap { if case .robots(let l) = $0 { l.map(\.name) } else { nil } }
        }
        var errors: [String] { all.compactMap { if case .error(let t) = $0 { t } else { nil } } }
        var rosterTexts: [String] { all.compactMap { if case .roster(let t) = $0 { t } else { nil } } }
    }

    func hub(roster: RosterFilter?) -> PhoneHub {
        var settings = PhoneHub.Settings(session: "", rate: 50, timing: .init(stale: .seconds(5), silent: .seconds(10)),
                                         limits: .init(pages: 8, drivers: 4))
        settings.roster = roster
        let hub = PhoneHub(settings: settings, logger: Logger(label: "test"))
        hub.setRobots([robot("p1", "robot 1"), robot("p2", "robot 2"), robot("p3", "robot 3")])
        return hub
    }

    @Test func withARosterAPageListsNothingUntilNamedThenOnlyItsStudentsRobot() throws {
        let hub = hub(roster: roster)
        let page = Reports()
        let id = try hub.open(from: "", sink: page.add)
        #expect(page.lastList == [])
        #expect(page.rosterTexts == ["This class has a roster: type your name to see your robot."])
        hub.handle(.name("ann"), from: id)
        #expect(page.lastList == ["robot 1"])
        #expect(page.rosterTexts.last == "The roster gives you robot 1.")
        hub.handle(.name("Zed"), from: id)
        #expect(page.lastList == [])
        #expect(page.rosterTexts.last == "\"Zed\" is not on this class's roster: check how you spelled your name, or ask the teacher.")
        // A robot that moves or renames is sent again, still filtered per page.
        let other = Reports()
        let id2 = try hub.open(from: "", sink: other.add)
        hub.handle(.name("Ben"), from: id2)
        hub.setRobots([robot("p1", "robot 1"), robot("p2", "robot 2"), robot("p3", "robot 3"), robot("p4", "robot 4")])
        #expect(other.lastList == ["robot 2"])
        #expect(page.lastList == [])
        hub.close(id, why: "test")
        hub.close(id2, why: "test")
    }

    @Test func withARosterTheHubRefusesAJoinToAnotherRobot() throws {
        let hub = hub(roster: roster)
        let page = Reports()
        let id = try hub.open(from: "", sink: page.add)
        // What a page could send by hand, whatever its list showed.
        hub.handle(.join(robot: "p2", name: "Ann", code: nil), from: id)
        hub.handle(.join(robot: "p1", name: "Zed", code: nil), from: id)
        #expect(page.errors == ["the roster gives Ann \"robot 1\", not \"robot 2\": drive your own robot",
                                "\"Zed\" is not on this class's roster: check how you spelled your name, or ask the teacher"])
        #expect(!page.all.contains { if case .joined = $0 { true } else { false } })
        #expect(hub.counts.drivers == 0)
        hub.close(id, why: "test")
    }

    @Test func withoutARosterEveryPageListsEveryRobotAndANameChangesNothing() throws {
        let hub = hub(roster: nil)
        let page = Reports()
        let id = try hub.open(from: "", sink: page.add)
        #expect(page.lastList == ["robot 1", "robot 2", "robot 3"])
        let before = page.all.count
        hub.handle(.name("Zed"), from: id)
        #expect(page.all.count == before)
        #expect(page.rosterTexts.isEmpty)
        hub.close(id, why: "test")
    }
}
