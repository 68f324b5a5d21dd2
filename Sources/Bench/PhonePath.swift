#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import RemoteWire
import SystemIO

/// Row 3w: a phone page's state message → `analog-remote web` (its WebSocket, the hub, that
/// page's own send loop) → UDP → `analog-remote receive` → `W` on the board pty. Both are the
/// built binary as child processes; the bench plays the page with ``PageSocket``.
///
/// Plain HTTP (`web --plain-http`): the bench has no TLS client (its module may not import the
/// server's TLS stack, see Package.swift). A phone's HTTPS adds the encryption of one small record
/// per message on top of this figure.
extension LatencyPaths {
    static func phonePath(_ settings: LatencySettings) throws(BenchError) -> PathMeasurement {
        var board = try BoardSide()
        let receiver = try RunningReceiver(.child, board: &board, settings: settings)
        // --stale-ms high: a sample that waits long for its W must not turn into a neutral write.
        let web = try Child.bench(executable: settings.executable,
                            arguments: ["web", "--quiet", "--plain-http", "--no-qr", "--host", "127.0.0.1", "--port", "0",
                                        "--stale-ms", "5000", "--silent-ms", "600000", "--peer", "127.0.0.1:\(receiver.port)"],
                            label: "web")
        defer {
            web.signal(SIGTERM)
            if !web.wait(timeout: .seconds(5), meanwhile: { if board.waitReadable(until: Monotonic.now() + 1_000_000) { _ = try? board.service() } }) {
                web.stop(grace: .seconds(1))
            }
        }
        let line = try web.waitForLine(prefix: "serving http on tcp port ", timeout: .seconds(20), interruption: settings.interruption)
        guard let port = UInt16(line) else { throw .setup("web printed a bad port line: \(line)") }
        let page = try PageSocket(port: port)
        defer { page.close() }
        try page.sendText(#"{"t":"join","robot":"p1","name":"bench"}"#)
        try page.waitFor(#""link":"driving""#, until: Monotonic.now() + 10_000_000_000) {
            if board.waitReadable(until: Monotonic.now() + 1_000_000) { _ = try? board.service() }
        }
        var result = try sample(board: &board, receiver: receiver, settings: settings, stages: []) { i throws(BenchError) in
            try page.answerPings()
            let s = i < 0 ? Stimulus.resting : Stimulus.states[i % 2]
            try page.sendText(#"{"t":"s","a":\#(s.angle),"b":\#(s.buttons.rawValue)}"#)
        }
        try page.sendText(#"{"t":"stop","why":"bench"}"#)
        result.receiverSummary = try receiver.stop(board: &board)
        return result
    }
}

/// The bench's stand-in for a phone page: a TCP socket that did the WebSocket handshake (RFC 6455,
/// client side), sends masked text frames and answers the server's pings. Measurement plumbing
/// only; the server side is Hummingbird's.
final class PageSocket {
    private let fd: Int32
    private var pending: [UInt8] = []

    init(port: UInt16) throws(BenchError) {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .setup("tcp socket: \(SystemError(call: "socket", errno: errno).reason)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        address.sin_port = port.bigEndian
        let ok = withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard ok == 0 else { throw .setup("web: connect: \(SystemError(call: "connect", errno: errno).reason)") }
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        // The Origin of a page the server served (its WebSocket refuses any other: OriginPolicy).
        let request = "GET /ws HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nOrigin: http://127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: YW5hbG9nLXJlbW90ZS1iZW5jaA==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        try write(Array(request.utf8))
        let end = Array("\r\n\r\n".utf8)
        let deadline = Monotonic.now() + 5_000_000_000
        while !pending.contains(subsequence: end) {
            guard Monotonic.now() < deadline else { throw .setup("web: no WebSocket handshake answer") }
            try readSome(wait: 100)
        }
        let head = String(decoding: pending, as: UTF8.self)
        guard head.hasPrefix("HTTP/1.1 101") else { throw .setup("web: WebSocket refused: \(head.prefix(40))") }
        let cut = pending.firstRange(of: end)!.upperBound
        pending.removeFirst(cut)
    }

    func close() { _ = Glibc.close(fd) }

    func sendText(_ text: String) throws(BenchError) {
        let payload = Array(text.utf8)
        precondition(payload.count < 126)
        var frame: [UInt8] = [0x81, 0x80 | UInt8(payload.count), 0, 0, 0, 0]   // mask key 0: XOR leaves it as it is
        frame += payload
        try write(frame)
    }

    /// Reads what waits (never blocks) and answers pings.
    func answerPings() throws(BenchError) {
        try readSome(wait: 0)
        _ = try frames()
    }

    /// Reads frames until a text message contains `needle`.
    func waitFor(_ needle: String, until deadline: Int64, meanwhile: () -> Void) throws(BenchError) {
        while Monotonic.now() < deadline {
            meanwhile()
            try readSome(wait: 1)
            if try frames().contains(where: { $0.contains(needle) }) { return }
        }
        throw .setup("web: the page never saw \(needle)")
    }

    /// Complete frames in `pending`: text messages returned, pings answered, the rest dropped.
    private func frames() throws(BenchError) -> [String] {
        var texts: [String] = []
        while pending.count >= 2 {
            let op = pending[0] & 0x0F
            var n = Int(pending[1] & 0x7F), head = 2
            if n == 126 {
                guard pending.count >= 4 else { break }
                n = Int(pending[2]) << 8 | Int(pending[3]); head = 4
            } else if n == 127 {
                throw .measurement("web sent a frame over 64 KiB")
            }
            guard pending.count >= head + n else { break }
            let payload = Array(pending[head..<(head + n)])
            pending.removeFirst(head + n)
            switch op {
            case 0x1: texts.append(String(decoding: payload, as: UTF8.self))
            case 0x9: try write([0x8A, 0x80 | UInt8(payload.count), 0, 0, 0, 0] + payload)
            case 0x8: throw .measurement("web closed the page's WebSocket")
            default: break
            }
        }
        return texts
    }

    private func readSome(wait milliseconds: Int32) throws(BenchError) {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, milliseconds) > 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = recv(fd, &buffer, buffer.count, 0)
        guard n > 0 else { throw .measurement("web closed the connection") }
        pending += buffer[..<n]
    }

    private func write(_ bytes: [UInt8]) throws(BenchError) {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw .measurement("web: send: \(SystemError(call: "send", errno: errno).reason)") }
            sent += n
        }
    }
}

private extension Array where Element == UInt8 {
    func contains(subsequence: [UInt8]) -> Bool { firstRange(of: subsequence) != nil }
}
