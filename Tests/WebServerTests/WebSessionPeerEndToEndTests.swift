import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `web --session ID --peer HOST:PORT` (docs/teacher-dashboard.md, for networks that filter
/// multicast): the built binary serves a named session whose robots are listed by address, and
/// its dashboard watches a receiver started with that `--session` — its row shows the robot's
/// own report, not a refusal for another session. The dashboard is a logged-in `/teacher/ws`
/// client over plain HTTP on loopback (``DashboardClient``), as a browser's page is.
@Suite(.serialized) struct WebSessionPeerEndToEndTests {
    static let key = "ark1-" + String(repeating: "3c", count: 32)

    @Test func theDashboardWatchesANamedSessionsRobotGivenByAddress() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("web-session-peer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let keyFile = dir.appendingPathComponent("teacher.key").path
        try Self.key.write(toFile: keyFile, atomically: true, encoding: .utf8)
        chmod(keyFile, 0o600)

        let receiver = try ChildProcess(analogRemote: ["receive", "--quiet", "--no-advertise", "--port", "0", "--board", "sim",
                                                       "--session", "class-3b", "--name", "robot-3b", "--teacher-key-file", keyFile,
                                                       "--state-dir", dir.appendingPathComponent("state").path])
        defer { receiver.signal(SIGTERM); _ = receiver.wait() }
        #expect(receiver.waitForOutput(timeout: .seconds(20)) { out, _ in out.contains("\n") })
        let first = receiver.stdout.split(separator: "\n").first ?? ""
        let port = try #require(UInt16(first.dropFirst("receiving on udp port ".count)), "\(receiver.stdout)")

        let web = try ChildProcess(analogRemote: ["web", "--quiet", "--session", "class-3b", "--peer", "127.0.0.1:\(port)",
                                                  "--teacher-key-file", keyFile, "--plain-http", "--host", "127.0.0.1", "--port", "0", "--no-qr"])
        defer { web.signal(SIGTERM); _ = web.wait() }
        #expect(web.waitForOutput(timeout: .seconds(20)) { out, _ in out.contains("serving http on tcp port ") },
                "web did not start: \(web.stderr)")
        let line = web.stdout.split(separator: "\n").first { $0.hasPrefix("serving http on tcp port ") } ?? ""
        let webPort = try #require(UInt16(line.split(separator: " ").last ?? ""), "\(web.stdout) \(web.stderr)")

        let client = try DashboardClient(port: webPort, key: Self.key)
        defer { client.close() }
        var row: [String: Any]?
        let end = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < end, row?["state"] == nil {
            guard let message = try client.nextMessage(timeout: .seconds(1)),
                  let rows = message["rows"] as? [[String: Any]] else { continue }
            row = rows.first
        }
        let shown = try #require(row, "no rows pushed")
        #expect(shown["name"] as? String == "robot-3b" && shown["state"] as? String == "free" && shown["refusal"] == nil,
                "the dashboard did not watch the session's robot: \(shown)")
        #expect(receiver.waitForOutput { _, err in err.contains("watched by the teacher's dashboard") }, "\(receiver.stderr)")
        #expect(!receiver.stderr.contains("ours is"), "a command for another session: \(receiver.stderr)")
    }
}

/// A logged-in dashboard without a browser: `POST /teacher/login` for the cookie, then the
/// `/teacher/ws` upgrade and its text frames (server frames are unmasked; only the short and
/// 16-bit lengths are expected for a row list this size).
final class DashboardClient {
    private let fd: Int32
    private var buffer: [UInt8] = []

    init(port: UInt16, key: String) throws {
        let origin = "http://127.0.0.1:\(port)"
        let body = "key=" + (key.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? key)
        let login = try Self.exchange(port: port, request: "POST /teacher/login HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nOrigin: \(origin)\r\n"
                                      + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
        guard let cookieLine = login.split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("set-cookie:") }),
              let cookie = cookieLine.dropFirst("set-cookie:".count).split(separator: ";").first else {
            throw DashboardClientError("login refused: \(login.prefix(300))")
        }
        fd = try Self.connect(port: port)
        let upgrade = "GET /teacher/ws HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nOrigin: \(origin)\r\nCookie: \(cookie.trimmingCharacters(in: .whitespaces))\r\n"
            + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        try Self.send(fd, upgrade)
        let head = try readHead(timeout: .seconds(5))
        guard head.hasPrefix("HTTP/1.1 101") else { close(); throw DashboardClientError("no upgrade: \(head.prefix(300))") }
    }

    func close() { _ = Glibc.close(fd) }

    /// The next JSON text frame, or nil if none came within `timeout`.
    func nextMessage(timeout: Duration) throws -> [String: Any]? {
        let end = ContinuousClock.now + timeout
        while ContinuousClock.now < end {
            if buffer.count >= 2 {
                let opcode = buffer[0] & 0x0F
                let short = Int(buffer[1] & 0x7F)
                guard short != 127 else { throw DashboardClientError("a frame too long for this client") }
                let header = short == 126 ? 4 : 2
                if buffer.count >= header {
                    let length = short == 126 ? Int(buffer[2]) << 8 | Int(buffer[3]) : short
                    if buffer.count >= header + length {
                        let payload = Array(buffer[header..<header + length])
                        buffer.removeFirst(header + length)
                        if opcode == 8 { throw DashboardClientError("the server closed the dashboard's socket") }
                        if opcode == 1, let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any] { return object }
                        continue
                    }
                }
            }
            guard try fill(until: end) else { return nil }
        }
        return nil
    }

    private func readHead(timeout: Duration) throws -> String {
        let end = ContinuousClock.now + timeout
        while true {
            if let r = buffer.firstRange(of: Array("\r\n\r\n".utf8)) {
                let head = String(decoding: buffer[..<r.upperBound], as: UTF8.self)
                buffer.removeFirst(r.upperBound)
                return head
            }
            guard try fill(until: end) else { throw DashboardClientError("no answer to the upgrade") }
        }
    }

    private func fill(until end: ContinuousClock.Instant) throws -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ms = max(0, Int32((end - .now) / .milliseconds(1)))
        guard poll(&p, 1, ms) > 0 else { return false }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = recv(fd, &chunk, chunk.count, 0)
        guard n > 0 else { throw DashboardClientError("the connection closed") }
        buffer += chunk[..<n]
        return true
    }

    static func connect(port: UInt16) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var sin = sockaddr_in()
        sin.sin_family = sa_family_t(AF_INET)
        sin.sin_port = port.bigEndian
        sin.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &sin) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard fd >= 0, rc == 0 else { _ = Glibc.close(fd); throw DashboardClientError("cannot connect to 127.0.0.1:\(port)") }
        return fd
    }

    static func send(_ fd: Int32, _ text: String) throws {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { throw DashboardClientError("send failed") }
            offset += n
        }
    }

    /// One request on its own connection; the whole answer (the server closes it).
    static func exchange(port: UInt16, request: String) throws -> String {
        let fd = try connect(port: port)
        defer { _ = Glibc.close(fd) }
        try send(fd, request)
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let end = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < end {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 500) > 0 else { if out.firstRange(of: Array("\r\n\r\n".utf8)) != nil { break } else { continue } }
            let n = recv(fd, &chunk, chunk.count, 0)
            if n <= 0 { break }
            out += chunk[..<n]
        }
        return String(decoding: out, as: UTF8.self)
    }
}

struct DashboardClientError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
