import Controller
import Foundation
import Logging
import PhoneLink
import RemoteWire
import Synchronization
import SystemIO
import Testing

/// A page through the hub to a UDP "receiver" on loopback: its own hello with the typed name,
/// its states, and neutral ×3 when the page goes away; names are unique; limits hold.
@Suite(.serialized) struct PhoneHubTests {
    final class Reports: Sendable {
        let list = Mutex<[PageReport]>([])
        func add(_ r: PageReport) { list.withLock { $0.append(r) } }
        var all: [PageReport] { list.withLock { $0 } }
        func errors() -> [String] { all.compactMap { if case .error(let t) = $0 { t } else { nil } } }
    }

    /// A bound UDP socket standing in for a receiver: collects 8-byte states and control datagrams.
    final class FakeReceiver {
        let socket: UDPSocket
        let address: SocketAddress
        var states: [(from: SocketAddress, state: ControllerState)] = []
        var controls: [(from: SocketAddress, bytes: [UInt8])] = []

        init() throws {
            socket = try UDPSocket.bind(port: 0, host: "127.0.0.1")
            address = try socket.localAddress()
        }

        /// Reads until `done` holds or 5 s pass.
        @discardableResult
        func pump(until done: () -> Bool) -> Bool {
            var buffer = [UInt8](repeating: 0, count: 2048)
            let deadline = ContinuousClock.now + .seconds(5)
            while !done() {
                guard ContinuousClock.now < deadline else { return false }
                _ = try? Poller.wait(for: socket.descriptor.rawValue, events: .readable, timeout: .milliseconds(50))
                while let (n, from) = try? socket.receive(into: &buffer) {
                    if n == 8, let s = try? StatePacket.decode(Array(buffer[..<8])) { states.append((from, s)) }
                    else { controls.append((from, Array(buffer[..<n]))) }
                }
            }
            return true
        }
    }

    /// Stale after 5 s: the neutral states these tests see come from the page leaving, not from silence.
    func hub(drivers: Int = 4, pages: Int = 8) -> PhoneHub {
        PhoneHub(settings: .init(session: "", rate: 50, timing: .init(stale: .seconds(5), silent: .seconds(10)),
                                 limits: .init(pages: pages, drivers: drivers)), logger: Logger(label: "test"))
    }

    @Test func aPageDrivesThroughItsOwnControllerAndLeavesWithNeutralThreeTimes() throws {
        let r = try FakeReceiver()
        let hub = hub()
        hub.setRobots([.init(id: "p1", name: "robot 1", peer: .init(address: r.address, label: "robot 1"))])
        let reports = Reports()
        let page = try #require(hub.open(sink: reports.add))
        #expect(reports.all.first == .robots([.init(id: "p1", name: "robot 1", address: r.address.description)]))
        hub.handle(.join(robot: "p1", name: "Ann", code: nil), from: page)
        // The hello carries the typed name (Protocol.md §7.4: str8 display name in the payload).
        #expect(r.pump { r.controls.contains { String(decoding: $0.bytes, as: UTF8.self).contains("Ann") } })
        let forward = ControllerState(angle: 0.25, buttons: .forward)
        hub.handle(.state(forward), from: page)
        #expect(r.pump { r.states.contains { $0.state == forward } })
        hub.close(page, why: "the page's WebSocket closed")
        // The controller's thread ends after its neutral packets (then it sends nothing more).
        #expect(r.pump { hub.running == 0 })
        r.pump { r.states.suffix(3).allSatisfy { $0.state == .neutral } }
        let last = try #require(r.states.lastIndex { $0.state == forward })
        #expect(r.states.count - last - 1 >= 3, "neutral three times after the last forward: \(r.states.suffix(5))")
        #expect(r.states[(last + 1)...].allSatisfy { $0.state == .neutral }, "only neutral after the page left")
        #expect(Set(r.states.map(\.from)).count == 1, "one source for one page")
    }

    /// The page resets its chip to "saying hello…" on `joined`: a status sent before it would be
    /// overwritten, so `joined` is the first thing a page hears after it joins.
    /// Stands for the hub's thread being descheduled right after it logs the join (as on a busy
    /// machine): holds that log line until the page has heard a status, or 1 s.
    struct SlowJoinLog: LogHandler {
        let reports: Reports
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            guard event.message.description == "phone joined" else { return }
            let deadline = ContinuousClock.now + .seconds(1)
            while ContinuousClock.now < deadline, !reports.all.contains(where: { if case .status = $0 { true } else { false } }) {
                Thread.sleep(forTimeInterval: 0.005)
            }
        }
    }

    @Test func joinedReachesThePageBeforeAnyStatusOfItsController() throws {
        let r = try FakeReceiver()
        let reports = Reports()
        let hub = PhoneHub(settings: .init(session: "", rate: 50, timing: .init(stale: .seconds(5), silent: .seconds(10)),
                                           limits: .init(pages: 8, drivers: 4)),
                           logger: Logger(label: "test") { _ in SlowJoinLog(reports: reports) })
        hub.setRobots([.init(id: "p1", name: "robot 1", peer: .init(address: r.address, label: "robot 1"))])
        let page = try #require(hub.open(sink: reports.add))
        hub.handle(.join(robot: "p1", name: "Ann", code: nil), from: page)
        #expect(r.pump { reports.all.contains { if case .status = $0 { true } else { false } } })
        let afterRobots = reports.all.drop { if case .robots = $0 { true } else { false } }
        #expect(afterRobots.first == .joined(robot: "p1", name: "robot 1"), "\(reports.all)")
        hub.close(page, why: "test")
        #expect(r.pump { hub.running == 0 })
    }

    @Test func twoPagesAreTwoSourcesAndNamesAreUnique() throws {
        let r = try FakeReceiver()
        let hub = hub()
        hub.setRobots([.init(id: "p1", name: "robot 1", peer: .init(address: r.address, label: "robot 1"))])
        let (ra, rb) = (Reports(), Reports())
        let a = try #require(hub.open(sink: ra.add))
        let b = try #require(hub.open(sink: rb.add))
        hub.handle(.join(robot: "p1", name: "Ann", code: nil), from: a)
        hub.handle(.join(robot: "p1", name: "ANN", code: nil), from: b)
        #expect(rb.errors() == ["name: \"ANN\" is taken on this server: pick another"])
        hub.handle(.join(robot: "p1", name: "Ben", code: nil), from: b)
        hub.handle(.state(ControllerState(angle: 0.1)), from: a)
        hub.handle(.state(ControllerState(angle: -0.1)), from: b)
        #expect(r.pump { Set(r.states.map(\.from)).count == 2 })
        hub.stopAll(timeout: .seconds(2))
        hub.close(a, why: "test")
        hub.close(b, why: "test")
    }

    @Test func pageAndDriverLimitsAnswerClearly() throws {
        let r = try FakeReceiver()
        let hub = hub(drivers: 1, pages: 2)
        hub.setRobots([.init(id: "p1", name: "robot 1", peer: .init(address: r.address, label: "robot 1"))])
        let (ra, rb) = (Reports(), Reports())
        let a = try #require(hub.open(sink: ra.add))
        let b = try #require(hub.open(sink: rb.add))
        #expect(hub.open(sink: { _ in }) == nil, "a third page is refused")
        hub.handle(.join(robot: "p1", name: "Ann", code: nil), from: a)
        hub.handle(.join(robot: "p1", name: "Ben", code: nil), from: b)
        #expect(rb.errors() == ["this server drives 1 robots already: ask the teacher"])
        hub.handle(.join(robot: "nope", name: "Ben", code: nil), from: b)
        #expect(rb.errors().last == "no robot \"nope\" here any more: pick one from the list")
        hub.close(a, why: "test")
        hub.close(b, why: "test")
        #expect(hub.counts.pages == 0)
    }

    @Test func oneAddressHoldsAtMostItsShareOfThePages() throws {
        let hub = PhoneHub(settings: .init(session: "", limits: .init(pages: 10, drivers: 1, pagesPerAddress: 2)), logger: Logger(label: "test"))
        let a = try hub.open(from: "192.0.2.7", sink: { _ in })
        let b = try hub.open(from: "192.0.2.7", sink: { _ in })
        #expect(throws: PhoneHub.PageRefusal.address("192.0.2.7", 2), "a third page from one address") {
            try hub.open(from: "192.0.2.7", sink: { _ in })
        }
        #expect(PhoneHub.PageRefusal.address("192.0.2.7", 2).description
            == "too many pages from your address (192.0.2.7): at most 2; close some tabs and reload")
        let c = try hub.open(from: "192.0.2.8", sink: { _ in })   // another address is not affected
        hub.close(a, why: "test")
        let d = try hub.open(from: "192.0.2.7", sink: { _ in })   // a page closed frees its slot
        for id in [b, c, d] { hub.close(id, why: "test") }
        #expect(PhoneHub.Limits(pages: 256).pagesPerAddress == 32)
        #expect(PhoneHub.Limits(pages: 2).pagesPerAddress == 2)
    }

    @Test func aRobotIsListedByTheNameItsReceiverGivesItself() throws {
        let hub = PhoneHub(settings: .init(session: ""), logger: Logger(label: "test"))
        let address = try SocketAddress.resolve("127.0.0.1:9")
        hub.setRobots([.init(id: "p1", name: "127.0.0.1:9", peer: .init(address: address, label: "127.0.0.1:9"))])
        let reports = Reports()
        let page = try #require(hub.open(sink: reports.add))
        hub.nameRobot("p1", "robot 1")
        hub.nameRobot("p1", "")
        #expect(hub.robots.map(\.name) == ["robot 1"])
        #expect(reports.all.last == .robots([.init(id: "p1", name: "robot 1", address: "127.0.0.1:9")]))
        hub.close(page, why: "test")
    }
}
