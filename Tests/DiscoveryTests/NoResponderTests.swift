#if canImport(Glibc)
import Glibc
#endif
import ErrorReporting
import Foundation
@testable import Discovery
import Synchronization
import SystemIO
import TestSupport
import Testing

/// Points D-Bus at nothing, so no test here can reach a real avahi-daemon (and send mDNS on the
/// machine's network), whatever runs on the machine. Called before any dns_sd call.
enum NoResponder {
    static let address = "unix:path=/nonexistent/analog-remote-test-bus"
    private static let done = Mutex(false)
    static func ensure() {
        done.withLock { d in
            if !d { setenv("DBUS_SYSTEM_BUS_ADDRESS", address, 1); d = true }
        }
    }
}

@Suite struct NoResponderTests {
    static let message = "analog-remote: no mDNS responder is running — start avahi-daemon, or use --peer HOST:PORT\n"

    @Test(arguments: [
        ["browse", "--session", "X", "--once", "--timeout", "1"],
        ["browse", "--session", "3年B組 チーム2"],
        ["advertise", "--session", "X", "--port", "45678", "--name", "robot"],
        ["control", "--session", "X", "--input", "stdin", "--quiet"],
        ["control", "--session", "3年B組 チーム2", "--receiver", "robot", "--input", "script:/nonexistent/drive.script"],
    ])
    func commandsSayOneLineAndExitFive(arguments: [String]) throws {
        // Through env -u: the binary must silence Avahi's three-line compat warning itself (other
        // tests here set AVAHI_COMPAT_NOWARN in this process, and children would inherit it).
        let child = try ChildProcess(URL(fileURLWithPath: "/usr/bin/env"),
                                     ["-u", "AVAHI_COMPAT_NOWARN", Paths.analogRemote.path] + arguments,
                                     environment: ["DBUS_SYSTEM_BUS_ADDRESS": NoResponder.address])
        let status = child.wait(timeout: .seconds(10))
        #expect(status == ExitStatus.noMDNSDaemon.rawValue)
        #expect(child.stderr == Self.message)
        #expect(child.stdout.isEmpty)
    }

    /// `receive` announces itself unless told not to: without a responder it says so in one line
    /// and exits 5 — before it opens the board (a board that does not exist would be exit 3).
    @Test(arguments: [
        ["receive", "--quiet", "--port", "0"],
        ["receive", "--port", "0", "--session", "class-3b", "--name", "robot", "--board", "serial:/dev/analog-remote-test-none"],
    ])
    func receiveWithoutNoAdvertiseSaysOneLineAndExitsFiveBeforeTheBoard(arguments: [String]) throws {
        let child = try ChildProcess(URL(fileURLWithPath: "/usr/bin/env"),
                                     ["-u", "AVAHI_COMPAT_NOWARN", Paths.analogRemote.path] + arguments,
                                     environment: ["DBUS_SYSTEM_BUS_ADDRESS": NoResponder.address])
        let status = child.wait(timeout: .seconds(10))
        #expect(status == ExitStatus.noMDNSDaemon.rawValue)
        #expect(child.stderr == "analog-remote: no mDNS responder is running — start avahi-daemon, or use --no-advertise\n")
        #expect(!child.stdout.contains("summary"), "the board was opened: \(child.stdout)")
    }

    /// The same receiver with --no-advertise runs without a responder (and stops on SIGTERM).
    @Test func receiveWithNoAdvertiseNeedsNoResponder() throws {
        let child = try ChildProcess(Paths.analogRemote, ["receive", "--quiet", "--no-advertise", "--port", "0"],
                                     environment: ["DBUS_SYSTEM_BUS_ADDRESS": NoResponder.address])
        #expect(child.waitForOutput(timeout: .seconds(10)) { out, _ in out.hasPrefix("receiving on udp port ") })
        child.signal(SIGTERM)
        #expect(child.wait(timeout: .seconds(10)) == 0)
        #expect(child.stdout.contains("\nsummary packets=0 "))
    }

    @Test func browserThrowsNoResponderAtOnce() throws {
        NoResponder.ensure()
        let started = ContinuousClock.now
        #expect(throws: DiscoveryError.noResponder(call: "DNSServiceBrowse")) {
            _ = try SessionBrowser(session: try SessionID("X"), onEvent: { _ in })
        }
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    @Test func advertiserThrowsNoResponderAtOnce() throws {
        NoResponder.ensure()
        #expect(throws: DiscoveryError.noResponder(call: "DNSServiceRegister")) {
            _ = try SessionAdvertiser(session: try SessionID("X"), name: "robot", port: 1, onEvent: { _ in })
        }
    }
}

@Suite struct DNSServiceLoopTests {
    /// Timers fire on the loop thread, in deadline order, without the caller polling.
    @Test func timersRunOnTheLoopThreadInOrder() throws {
        let loop = try DNSServiceLoop()
        defer { loop.shutdown() }
        let fired = Mutex<[Int]>([])
        let onLoop = Mutex<Bool>(true)
        loop.post { core in
            for (i, ms) in [(2, 60), (1, 20), (3, 100)] {
                core.schedule(after: .milliseconds(ms)) { _ in
                    fired.withLock { $0.append(i) }
                    if !loop.isLoopThread { onLoop.withLock { $0 = false } }
                }
            }
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while fired.withLock({ $0.count }) < 3 && ContinuousClock.now < deadline { usleep(5_000) }
        #expect(fired.withLock { $0 } == [1, 2, 3])
        #expect(onLoop.withLock { $0 })
    }

    @Test func performReturnsTheResultAndRefusesToRunInsideAHandler() throws {
        let loop = try DNSServiceLoop()
        defer { loop.shutdown() }
        let answer = try loop.perform("test") { _ in 42 }
        #expect(answer == 42)
        let inner = Mutex<DiscoveryError?>(nil)
        _ = try loop.perform("outer") { _ in
            do throws(DiscoveryError) { _ = try loop.perform("inner") { _ in 0 } } catch { inner.withLock { $0 = error } }
            return 0
        }
        #expect(inner.withLock { $0 } == .calledFromHandler(call: "inner"))
        #expect(!loop.isLoopThread)
    }

    @Test func afterShutdownNothingIsAccepted() throws {
        let loop = try DNSServiceLoop()
        loop.shutdown()
        loop.shutdown()
        #expect(!loop.post { _ in })
        #expect(throws: DiscoveryError.self) { _ = try loop.perform("late") { _ in 1 } }
    }

    @Test func backoffDoublesToThirtySecondsAndResets() {
        var b = Backoff()
        let delays = (0..<8).map { _ in b.nextDelay() }
        #expect(delays == [1, 2, 4, 8, 16, 30, 30, 30].map { Duration.seconds($0) })
        b.reset()
        #expect(b.nextDelay() == .seconds(1))
    }

    @Test func mailboxHandsEventsOverAndItsDescriptorSaysWhen() throws {
        let box = try EventMailbox<Int>()
        #expect(try Poller.wait(for: box.descriptor, events: .readable, timeout: .zero).isEmpty)
        box.post(1); box.post(2)
        #expect(try Poller.wait(for: box.descriptor, events: .readable, timeout: .zero).contains(.readable))
        #expect(box.drain() == [1, 2])
        #expect(try Poller.wait(for: box.descriptor, events: .readable, timeout: .zero).isEmpty)
        #expect(box.drain().isEmpty)
    }
}

@Suite struct BrowseListingTests {
    @Test func linesCarryNameAddressVersionPeerAndTiming() throws {
        let v4 = try #require(SocketAddress(addressBytes: [198, 18, 0, 1], port: 45678))
        let v6 = try #require(SocketAddress(addressBytes: [0xFE, 0x80] + Array(repeating: 0, count: 13) + [1], port: 45678, scopeID: 1))
        let a = ReceiverAnnouncement(session: try SessionID("s"), peer: "00000000000000aa", displayName: "ロボ 1")
        let r = DiscoveredReceiver(name: "ロボ 1 #2", announcement: a, host: "h.local.", port: 45678, addresses: [v4, v6],
                         interfaces: [1], notes: [])
        let line = BrowseListing.line(for: .available(r), interfaceName: { _ in "veth0" })
        #expect(line == "available \"ロボ 1 #2\" 198.18.0.1:45678 v=1 peer=00000000000000aa name=\"ロボ 1\" failsafe=250 rate=50 if=veth0 also=[fe80::1%lo]:45678")
        #expect(BrowseListing.line(for: .unavailable(name: "a \"b\"")) == "unavailable \"a \\\"b\\\"\"")
        #expect(BrowseListing.elapsed(.milliseconds(12_345)) == "12.345")
        #expect(BrowseListing.elapsed(.milliseconds(7)) == "0.007")
    }
}
