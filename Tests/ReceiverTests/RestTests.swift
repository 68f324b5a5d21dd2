import BoardLink
import BoardProtocol
import Foundation
import Logging
import RemoteWire
@testable import Receiver
import SystemIO
import Testing

/// ``BoardRest``: what `analog-remote rest` and the receiver's exit write, and the watchdog
/// keep-alive that waits for a live board link.
@Suite struct RestTests {
    /// The mapping's rest values go out with the safe state: a button bound to VAR4 (which no
    /// profile's safe state names) is released too.
    @Test func leaveWritesTheMappingsRestValuesThenTheSafeState() throws {
        var mapping = Mapping.kit
        mapping.buttons = [ButtonBinding(button: .a, address: 0x15, on: [7], off: [3])]
        let board = MemoryBoardSink(safeState: MemoryMapProfile.kit.safeState)
        board.setDesired([0x22: 0xC0, 0x23: 0x40, 0x0F: 200, 0x15: 7])
        #expect(BoardRest.leave(board, values: mapping.restValues, timeout: .seconds(1)))
        #expect(board.map[0x22] == 0 && board.map[0x23] == 0 && board.map[0x0F] == 0)
        #expect(board.map[0x15] == 3, "the bound output is released: \(board.map)")
        #expect(board.safeStateWrites == 1)
    }

    /// The whole path through the board link, on the in-process simulated board: opened as the
    /// receiver opens it (probe, profile), left at rest, confirmed.
    @Test func restOpensProbesAndConfirms() throws {
        let resolution = try BoardRest.rest(spec: "sim", plan: BoardPlan(), timeout: .seconds(2))
        #expect(resolution?.kind == .motors)
        #expect(resolution?.identity.mapSize == 36)
        do {
            _ = try BoardRest.rest(spec: "serial:/nonexistent/ttyACM9", plan: BoardPlan(), timeout: .seconds(1))
            Issue.record("a missing board was rested")
        } catch {
            #expect(error.kind == .deviceUnavailable && error.message.hasPrefix("serial:/nonexistent/ttyACM9: no such device"), "\(error)")
        }
    }

    /// A fake notify socket: every datagram the supervision sends.
    final class NotifySocket {
        let path = NSTemporaryDirectory() + "rest-notify-\(UUID().uuidString.prefix(8))"
        let fd: Int32
        init() throws {
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
            let bound = withUnsafePointer(to: &address) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard fd >= 0, bound == 0 else { throw CommandFailure("cannot bind \(path)", kind: .failed) }
        }
        deinit { close(fd); unlink(path) }
        func received() -> [String] {
            var out: [String] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = recv(fd, &buffer, buffer.count, 0)
                guard n > 0 else { return out }
                out.append(String(decoding: buffer.prefix(n), as: UTF8.self))
            }
        }
    }

    @Test func aDueKeepAliveWaitsWhileTheBoardLinkIsStale() throws {
        let socket = try NotifySocket()
        let notifier = try #require(try ServiceNotifier(address: socket.path, watchdogMicroseconds: 1_000_000))
        let supervision = try ServiceSupervision(notifier: notifier, reloader: nil, stallAfter: nil)
        let logger = Logger(label: "rest-tests")
        let start = Tick.now()
        let recheck = Tick.nanoseconds(ServiceSupervision.linkRecheck)
        supervision.tick(at: start, isReady: { true }, linkStale: { nil }, status: { "ok" }, logger: logger)
        #expect(socket.received().filter { $0 == "WATCHDOG=1\n" }.count == 1)
        // Due 0.5 s later, but the link's thread has been silent for 700 ms: nothing sent, and
        // looked at again soon rather than a whole interval later.
        let due = start + 500_000_000
        supervision.tick(at: due, isReady: { true }, linkStale: { 700 }, status: { "ok" }, logger: logger)
        #expect(socket.received().isEmpty)
        #expect(supervision.deadline(nil, now: due) == due + recheck)
        // The link goes round again: the keep-alive goes out at once.
        supervision.tick(at: due + recheck, isReady: { true }, linkStale: { nil }, status: { "ok" }, logger: logger)
        #expect(socket.received() == ["WATCHDOG=1\n"])
    }

    @Test func aConnectionsBeatIsFreshWhileItsThreadRuns() throws {
        let board = try BoardConnection(spec: .simulated, profile: .kit)
        defer { board.close() }
        usleep(400_000)
        // Idle and up: the thread looks at the clock once per reply timeout (100 ms).
        #expect(Tick.now() - board.lastBeat < Tick.nanoseconds(ReceiverService.linkStaleAfter))
    }
}
