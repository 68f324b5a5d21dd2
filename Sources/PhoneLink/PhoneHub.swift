import Controller
import Logging
import RemoteWire
import Synchronization
import SystemIO

/// Every page connected to `analog-remote web`, the robots they may pick, and who drives which.
/// Thread-safe (one lock); called from the server's WebSocket tasks, the robot list's thread and
/// the phones' send-loop threads. Nothing here blocks or does I/O except starting a controller's
/// thread.
///
/// Limits (bad input must not hurt the other phones): at most ``Limits/pages`` pages at once, of
/// them at most ``Limits/pagesPerAddress`` from one client address, and ``Limits/drivers``
/// controllers; a display name is unique among the pages of this server (case-insensitive); a
/// page that joins again first ends its old controller.
package final class PhoneHub: Sendable {
    package struct Limits: Sendable {
        package var pages: Int
        package var drivers: Int
        /// Pages one client address may hold, so that one client cannot take every slot.
        package var pagesPerAddress: Int

        /// `pagesPerAddress` nil: ``defaultShare(of:)`` of `pages`.
        package init(pages: Int = 256, drivers: Int = 100, pagesPerAddress: Int? = nil) {
            self.pages = pages
            self.drivers = drivers
            self.pagesPerAddress = pagesPerAddress ?? Self.defaultShare(of: pages)
        }

        /// An eighth of the pages (at least 4, at most all): a classroom behind one NAT address
        /// needs `--max-pages-per-address`.
        package static func defaultShare(of pages: Int) -> Int { min(pages, max(4, pages / 8)) }
    }

    /// Why a page was not let in; ``description`` is the line the page shows.
    package enum PageRefusal: Error, Equatable, Sendable, CustomStringConvertible {
        case full(Int)
        case address(String, Int)

        package var description: String {
            switch self {
            case .full(let n): "the server is full: \(n) pages are open, try again later"
            case .address(let a, let n): "too many pages from your address (\(a)): at most \(n); close some tabs and reload"
            }
        }

        /// The WebSocket close reason (at most 123 bytes).
        package var closeReason: String {
            switch self {
            case .full: "server full"
            case .address: "too many pages from this address"
            }
        }
    }

    package struct Settings: Sendable {
        package var session: String
        package var rate: Double
        package var timing: PhoneSource.Timing
        package var limits: Limits
        /// `web --record-dir`: one recording per phone drive in this directory.
        package var recordings: PhoneRecordings?
        /// `web --roster`: each page lists and may drive only the robot of the name it gave.
        package var roster: RosterFilter?

        package init(session: String, rate: Double = Double(SendRate.standardHz), timing: PhoneSource.Timing = .init(), limits: Limits = .init()) {
            self.session = session
            self.rate = rate
            self.timing = timing
            self.limits = limits
        }
    }

    /// A robot a page may pick: where it is, what it is called.
    package struct Robot: Equatable, Sendable {
        package var id: String
        package var name: String
        package var peer: Destination.Peer

        package init(id: String, name: String, peer: Destination.Peer) {
            self.id = id
            self.name = name
            self.peer = peer
        }
    }

    package typealias PageID = UInt64
    package typealias Sink = @Sendable (PageReport) -> Void

    private struct Page {
        var sink: Sink
        /// The client's IP address ("" when not known: not counted per address).
        var address = ""
        var name: String?
        /// The name the page typed (`name` message or its last join): with a roster, its list.
        var student: String?
        var robot: String?
        var controller: PhoneController?
        /// A join in progress: counts as a driver, so concurrent joins cannot pass the limit.
        var joining = false

        var drives: Bool { controller != nil || joining }
    }

    private struct State {
        var nextID: PageID = 1
        var pages: [PageID: Page] = [:]
        var robots: [Robot] = []
        /// Every controller whose thread has not ended, also those of pages already gone.
        var running: [ObjectIdentifier: PhoneController] = [:]
    }

    package let settings: Settings
    private let logger: Logger
    private let state = Mutex(State())

    package init(settings: Settings, logger: Logger) {
        self.settings = settings
        self.logger = logger
    }

    // MARK: Pages

    /// A new page; nil when ``Limits/pages`` are already connected (the caller tells the page).
    package func open(sink: @escaping Sink) -> PageID? {
        try? open(from: "", sink: sink)
    }

    /// A new page from the client at `address` (an IP address; "" is not counted per address).
    /// Throws when ``Limits/pages`` are connected, or ``Limits/pagesPerAddress`` from `address`.
    package func open(from address: String, sink: @escaping Sink) throws(PageRefusal) -> PageID {
        let opened = state.withLock { s -> Result<(PageID, [PageReport.Robot]), PageRefusal> in
            guard s.pages.count < settings.limits.pages else { return .failure(.full(settings.limits.pages)) }
            if !address.isEmpty, s.pages.values.count(where: { $0.address == address }) >= settings.limits.pagesPerAddress {
                return .failure(.address(address, settings.limits.pagesPerAddress))
            }
            let id = s.nextID
            s.nextID += 1
            s.pages[id] = Page(sink: sink, address: address)
            return .success((id, self.list(s, for: nil)))
        }
        let (id, list) = try opened.get()
        sink(.robots(list))
        if settings.roster != nil { sink(.roster(Self.rosterHint)) }
        return id
    }

    /// The page is gone (tab closed, WebSocket dropped): its controller sends neutral ×3 and
    /// stops. Idempotent.
    package func close(_ id: PageID, why: String) {
        let controller = state.withLock { s -> PhoneController? in
            s.pages.removeValue(forKey: id)?.controller
        }
        controller?.stop(why)
        if controller != nil { broadcastRobots() }
    }

    /// What the page sent, decoded.
    package func handle(_ message: PageMessage, from id: PageID) {
        switch message {
        case .join(let robot, let name, let code):
            join(id, robot: robot, name: name, code: code)
        case .name(let name):
            named(id, name)
        case .state(let s):
            let controller = state.withLock { $0.pages[id]?.controller }
            controller?.post(.state(s))
        case .stop(let why):
            let controller = state.withLock { s -> PhoneController? in
                defer { s.pages[id]?.controller = nil; s.pages[id]?.robot = nil }
                return s.pages[id]?.controller
            }
            controller?.stop("the page said stop (\(why))")
            if controller != nil { broadcastRobots() }
        }
    }

    /// Tells the page what went wrong (one line) without ending anything.
    package func refuse(_ id: PageID, _ text: String) {
        let sink = state.withLock { $0.pages[id]?.sink }
        sink?(.error(text))
    }

    private func join(_ id: PageID, robot robotID: String, name: String, code: String?) {
        enum Outcome { case refused(String), start(Robot, Sink, PhoneController?) }
        let outcome = state.withLock { s -> Outcome in
            guard let page = s.pages[id] else { return .refused("this page is not connected") }
            guard let robot = s.robots.first(where: { $0.id == robotID }) else {
                return .refused("no robot \"\(robotID)\" here any more: pick one from the list")
            }
            // Enforced here, not only by the page's list: a page may send any robot id.
            if let refusal = settings.roster?.refusal(name, robot) { return .refused(refusal) }
            let folded = name.lowercased()
            if s.pages.contains(where: { $0.key != id && $0.value.name?.lowercased() == folded }) {
                return .refused("name: \"\(name)\" is taken on this server: pick another")
            }
            guard !page.joining else { return .refused("still joining: wait a moment") }
            let drivers = s.pages.values.filter(\.drives).count - (page.controller == nil ? 0 : 1)
            guard drivers < settings.limits.drivers else {
                return .refused("this server drives \(settings.limits.drivers) robots already: ask the teacher")
            }
            s.pages[id]?.name = name
            s.pages[id]?.student = name
            s.pages[id]?.robot = robot.id
            let old = page.controller
            s.pages[id]?.controller = nil
            s.pages[id]?.joining = true
            return .start(robot, page.sink, old)
        }
        switch outcome {
        case .refused(let text):
            refuse(id, text)
        case .start(let robot, let sink, let old):
            old?.stop("the page picked another robot")
            // `joined` goes out before the controller's thread exists: on a busy machine that
            // thread can have its hello answered (and report "driving") before this thread runs
            // again, and a `joined` arriving after it would put the page back to "saying hello…".
            sink(.joined(robot: robot.id, name: robot.name))
            // The receiver's accept is unsigned: its name never renames the robot on the list
            // (a laptop at that address could call itself another robot); only a reply signed with
            // the teacher key does (``PeerNames``).
            let report: Sink = sink
            var options = PhoneController.Options(displayName: name, pairingCode: code, session: settings.session,
                                                  rate: settings.rate, timing: settings.timing)
            options.recordings = settings.recordings
            let controller: PhoneController
            do {
                controller = try PhoneController(options, peer: robot.peer, logger: logger, report: report) { [weak self] reason in
                    sink(.ended(Self.describe(reason)))
                    self?.finished(id)
                }
                let key = ObjectIdentifier(controller)
                state.withLock { s in if !controller.isFinished { s.running[key] = controller } }
            } catch {
                state.withLock { $0.pages[id]?.joining = false }
                sink(.ended("cannot start a controller: \(error)"))
                return
            }
            let kept = state.withLock { s -> Bool in
                guard s.pages[id] != nil else { return false }
                s.pages[id]?.controller = controller
                s.pages[id]?.joining = false
                return true
            }
            if !kept { controller.stop("the page left while joining") }
            logger.info("phone joined", metadata: ["name": "\(name)", "robot": "\(robot.name)", "peer": "\(robot.peer.address)"])
            broadcastRobots()
        }
    }

    /// A controller ended on its own (refused, page silent, signal).
    private func finished(_ id: PageID) {
        state.withLock { s in
            s.running = s.running.filter { !$0.value.isFinished }
            if let c = s.pages[id]?.controller, c.isFinished {
                s.pages[id]?.controller = nil
                s.pages[id]?.robot = nil
            }
        }
        broadcastRobots()
    }

    // MARK: Robots

    /// The robots pages may pick (a fixed `--peer` list, or the session's receivers as DNS-SD
    /// finds them). A robot that moved takes its drivers along.
    package func setRobots(_ robots: [Robot]) {
        let moved = state.withLock { s -> [(PhoneController, Destination.Peer)] in
            s.robots = robots
            var moved: [(PhoneController, Destination.Peer)] = []
            for page in s.pages.values {
                guard let c = page.controller, let r = robots.first(where: { $0.id == page.robot }) else { continue }
                if c.destination.current != r.peer { moved.append((c, r.peer)) }
            }
            return moved
        }
        for (c, peer) in moved { c.destination.set(peer) }
        broadcastRobots()
    }

    package var robots: [Robot] { state.withLock { $0.robots } }

    /// The name a robot's receiver gives itself in a reply signed with the teacher key
    /// (``PeerNames``; nothing unsigned calls this): every page lists it by that name from now
    /// on. Empty or unchanged names change nothing.
    package func nameRobot(_ id: String, _ name: WireText) {
        let changed = state.withLock { s -> Bool in
            guard !name.isEmpty, let i = s.robots.firstIndex(where: { $0.id == id }), s.robots[i].name != name.text else { return false }
            s.robots[i].name = name.text
            return true
        }
        if changed { broadcastRobots() }
    }

    /// Pages connected, controllers running.
    package var counts: (pages: Int, drivers: Int) {
        state.withLock { s in (s.pages.count, s.pages.values.filter(\.drives).count) }
    }

    /// Controllers still running (their pages may be gone: they are sending their neutral packets).
    package var running: Int {
        state.withLock { s in s.running.values.filter { !$0.isFinished }.count }
    }

    /// Stops every controller (the server is shutting down) and waits up to `timeout` for their
    /// neutral packets.
    package func stopAll(timeout: Duration) {
        let controllers = state.withLock { s in Array(s.running.values) }
        for c in controllers { c.stop("the server is stopping") }
        let deadline = ContinuousClock.now + timeout
        for c in controllers { c.wait(timeout: max(.zero, deadline - .now)) }
    }

    private func broadcastRobots() {
        let lists = state.withLock { s -> [(Sink, [PageReport.Robot])] in
            let all = Self.list(s)
            return s.pages.values.map { ($0.sink, self.filtered(all, s, for: $0.student)) }
        }
        for (sink, list) in lists { sink(.robots(list)) }
    }

    /// The robots a page of `student` sees: all of them, or with a roster only that student's.
    private func list(_ s: State, for student: String?) -> [PageReport.Robot] {
        filtered(Self.list(s), s, for: student)
    }

    private func filtered(_ all: [PageReport.Robot], _ s: State, for student: String?) -> [PageReport.Robot] {
        guard let roster = settings.roster else { return all }
        guard let student else { return [] }
        return zip(s.robots, all).filter { roster.allows(student, $0.0) }.map(\.1)
    }

    private static func list(_ s: State) -> [PageReport.Robot] {
        s.robots.map { r in
            let driver = s.pages.values.first { $0.robot == r.id && $0.controller != nil }?.name
            return PageReport.Robot(id: r.id, name: r.name, address: r.peer.address.description, driver: driver)
        }
    }

    static let rosterHint = "This class has a roster: type your name to see your robot."

    /// The page says who it is (a roster lists only that student's robot); without a roster
    /// this changes nothing.
    private func named(_ id: PageID, _ name: String) {
        guard let roster = settings.roster else { return }
        let (sink, shown, online) = state.withLock { s -> (Sink?, [PageReport.Robot], Bool) in
            s.pages[id]?.student = name
            let visible = self.list(s, for: name)
            return (s.pages[id]?.sink, visible, !visible.isEmpty)
        }
        guard let sink else { return }
        sink(.robots(shown))
        if let robot = roster.robot(for: name) {
            sink(.roster(online ? "The roster gives you \(robot)." : "The roster gives you \(robot), which is not on yet: is its receiver running?"))
        } else {
            sink(.roster("\"\(name)\" is not on this class's roster: check how you spelled your name, or ask the teacher."))
        }
    }

    static func describe(_ reason: EndReason) -> String {
        switch reason {
        case .refused(let why): "refused: \(why)"
        case .deviceLost(let why): "\(why): sent neutral and stopped"
        case .signal: "the server is stopping: sent neutral and stopped"
        default: "stopped: sent neutral"
        }
    }
}
