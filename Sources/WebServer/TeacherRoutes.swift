import ControlPlane
import ControlWire
import RemoteWire
import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket

/// `/teacher` on the phone server: the login form, the dashboard (only with a session cookie,
/// TeacherAuth.swift), its script, the lesson's log as CSV, and `/teacher/ws`, which pushes the
/// rows four times a second and takes the teacher's buttons. Without the cookie every one of
/// them but the form and its style sheet answers 401, and the socket is not upgraded.
struct TeacherDashboard: Sendable {
    let auth: TeacherAuth
    let link: TeacherLink
    /// The button game, started and ended from the dashboard (TeacherGame.swift).
    let game: TeacherGame
    let logger: Logger

    /// Each open dashboard gets the rows at least this often (the "last heard" ages move)…
    static let pushPeriod: Duration = .milliseconds(250)
    /// …and within this of a robot's report, but never more often (30 robots report 60 times a
    /// second together: one push per report would cost the server more than the reports).
    static let pushSoonest: Duration = .milliseconds(100)

    func install(_ router: Router<SocketRequestContext>, sockets: Router<SocketRequestContext>) {
        router.get("/teacher") { request, _ -> Response in
            auth.admits(request.headers) ? TeacherAssets.response(.dashboard)
                : TeacherAssets.login(status: .unauthorized, message: nil, plain: !auth.secureCookie)
        }
        router.post("/teacher/login") { request, context -> Response in
            let body = try await request.body.collect(upTo: 4096)
            let key = Self.formValue("key", in: String(buffer: body)) ?? ""
            switch auth.login(key: key, from: context.channel.remoteAddress?.ipAddress ?? "") {
            case .ok(let token):
                link.events.record(robot: "", event: "login", detail: "teacher logged in")
                var headers = HTTPFields()
                headers[.location] = "/teacher"
                headers[.setCookie] = auth.setCookie(token)
                return Response(status: .seeOther, headers: headers)
            case .wrong:
                logger.warning("teacher login: wrong key", metadata: ["failed": "\(auth.failed)"])
                return TeacherAssets.login(status: .unauthorized, message: "That is not the teacher key. Check it and try again.",
                                           plain: !auth.secureCookie)
            case .throttled:
                return TeacherAssets.login(status: .tooManyRequests, message: "Too many attempts: wait a few seconds, then try again.",
                                           plain: !auth.secureCookie)
            }
        }
        // Ends the cookie's session: every dashboard socket opened with it closes at once and
        // obeys nothing more (serve(…)); other sessions (another browser) stay.
        router.post("/teacher/logout") { request, _ -> Response in
            if auth.logout(request.headers) { link.events.record(robot: "", event: "logout", detail: "teacher logged out") }
            var headers = HTTPFields()
            headers[.location] = "/teacher"
            headers[.setCookie] = auth.clearCookie
            return Response(status: .seeOther, headers: headers)
        }
        router.get("/teacher/teacher.css") { _, _ in TeacherAssets.response(.style) }
        router.get("/teacher/teacher.js") { request, _ -> Response in
            auth.admits(request.headers) ? TeacherAssets.response(.script) : Response(status: .unauthorized)
        }
        router.get("/teacher/log.csv") { request, _ -> Response in
            guard auth.admits(request.headers) else { return Response(status: .unauthorized) }
            var headers = HTTPFields()
            headers[.contentType] = "text/csv; charset=utf-8"
            headers[.contentDisposition] = "attachment; filename=\"lesson.csv\""
            headers[.cacheControl] = "no-store"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: link.events.csv())))
        }
        sockets.ws("/teacher/ws", shouldUpgrade: { request, _ in
            auth.admits(request.headers) ? .upgrade([:]) : .dontUpgrade
        }) { inbound, outbound, context in
            // The Origin gate (OriginGateChannel) has already passed this upgrade; nothing follows a Close.
            let channel = context.requestContext.channel
            await WebSocketCloseGuard.install(on: channel)
            guard let token = TeacherAuth.token(in: context.request.headers) else { return }
            try await serve(inbound: inbound, outbound: outbound, session: token) { channel.close(promise: nil) }
        }
    }

    /// The close code a dashboard's WebSocket ends with when its session ended (logged out, or
    /// expired): the page then shows the login form.
    static let sessionEnded = WebSocketErrorCode.unknown(4401)

    /// One open dashboard for the session cookie `token`. Its socket lives only as long as the
    /// session: once the session ends (``TeacherAuth/logout(_:)``, expiry) no message on it is
    /// obeyed, a Close (4401) goes out within 25 ms, and the connection is cut 1 s later if
    /// the page has not closed it by then.
    func serve(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, session token: String,
               cut: @escaping @Sendable () -> Void) async throws {
        link.dashboardOpen()
        await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                var pushed = (version: -1, at: ContinuousClock.now)
                while !Task.isCancelled {
                    guard auth.isLive(token) else {
                        try? await outbound.close(Self.sessionEnded, reason: "the teacher logged out")
                        try? await Task.sleep(for: .seconds(1))
                        cut()
                        return
                    }
                    let now = ContinuousClock.now, version = link.version
                    if now - pushed.at >= Self.pushPeriod || (version != pushed.version && now - pushed.at >= Self.pushSoonest) {
                        link.dashboardOpen()
                        try await outbound.write(.text(TeacherRows.json(link.rows(), now: now, roster: link.roster, missing: link.missing(),
                                                                        game: game.snapshot, dropped: link.droppedReports,
                                                                        watchingSince: link.watchingSince)))
                        pushed = (version, now)
                    }
                    try await Task.sleep(for: .milliseconds(25))
                }
            }
            var bucket = TokenBucket(rate: 20, burst: 40)
            do {
                for try await message in inbound.messages(maxSize: 1024) {
                    // The session is checked on every message, not only at the upgrade.
                    guard auth.isLive(token) else {
                        try? await outbound.close(Self.sessionEnded, reason: "the teacher logged out")
                        break
                    }
                    guard bucket.take(now: .now), case .text(let text) = message else { continue }
                    command(text)
                }
            } catch {
                logger.debug("dashboard WebSocket ended", metadata: ["error": "\(error)"])
            }
            group.cancelAll()
        }
    }

    /// `{"t":"stop"|"release"|"identify"|"kick"|"lock"|"unlock","robot":ID|"*","arg":TEXT}`,
    /// `{"t":"dismiss","robot":ID}` (forget a silent robot's row), `{"t":"game-start"}`,
    /// `{"t":"game-end"}`.
    func command(_ text: String) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
              let t = object["t"] as? String else { return }
        switch t {
        case "game-start": game.start(); return
        case "game-end": game.end(); return
        default: break
        }
        guard let robot = object["robot"] as? String else { return }
        if t == "dismiss" {
            if robot != "*" { link.dismiss(robot: robot) }
            return
        }
        let arg = String((object["arg"] as? String ?? "").prefix(64))
        let command: TeacherLink.Command
        switch t {
        case "stop": command = .stop
        case "release": command = .release
        case "identify": command = .identify
        case "kick": command = .kick(arg)
        case "lock": command = .lock(arg)
        case "unlock": command = .unlock
        default: return
        }
        let targets = robot == "*" ? link.rows().map(\.id) : [robot]
        for id in targets { link.enqueue(command, robot: id) }
        link.events.record(robot: robot == "*" ? "all" : robot, event: "teacher-\(t)", detail: arg)
    }

    static func formValue(_ name: String, in body: String) -> String? {
        for pair in body.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            guard kv.first.map(String.init) == name else { continue }
            let raw = kv.count == 2 ? String(kv[1]).replacingOccurrences(of: "+", with: " ") : ""
            return raw.removingPercentEncoding ?? raw
        }
        return nil
    }
}

/// The rows as the dashboard reads them.
enum TeacherRows {
    /// A robot silent this long (or never heard) is OFFLINE: four reports missed (§7.12).
    static let offlineAfter: Duration = .seconds(2)

    /// The order of the tiles: the roster's robots in the roster's order, then the others in
    /// natural order of their names ("robot 2" before "robot 10").
    static func ordered(_ rows: [TeacherLink.Row], roster: Roster?) -> [TeacherLink.Row] {
        let place = roster?.robotOrder ?? [:]
        // By what the page shows: the signed name, else the address (an unproven robot's own
        // words order nothing either).
        let keyed = rows.map { row in
            let shown = row.name ?? row.address ?? row.label
            return (row: row, name: shown, place: place[shown.lowercased()] ?? Int.max)
        }
        return keyed.sorted { a, b in
            if a.place != b.place { return a.place < b.place }
            if a.name != b.name { return NaturalOrder.less(a.name, b.name) }
            return a.row.id < b.row.id
        }.map(\.row)
    }

    /// `dropped`: watch reports the link dropped as forged or stale (Protocol.md §7.12); the page
    /// says so under the header when there are any. Each row: `offline` (silent for
    /// ``offlineAfter`` or never heard), `gone` (no longer listed by DNS-SD, kept until back or
    /// dismissed), `keyless` (answers unsigned: only Stop reaches it, as a stop-all
    /// for the whole session sent to its address), `sent` and
    /// `sentAge` (the last stop or release sent to it, ms ago).
    /// `watchingSince`: when the link began watching without a break (a robot is not offline
    /// for the silence before it was asked).
    static func json(_ rows: [TeacherLink.Row], now: ContinuousClock.Instant, roster: Roster? = nil, missing: [String] = [],
                     game: TeacherGame.Board? = nil, dropped: Int = 0, watchingSince: ContinuousClock.Instant? = nil) -> String {
        let list: [[String: Any]] = ordered(rows, roster: roster).map { row in
            var o: [String: Any] = ["id": row.id, "label": row.label]
            if let heard = row.heard { o["age"] = Int((now - heard) / .milliseconds(1)) }
            let since = [row.heard, watchingSince].compactMap { $0 }.max()
            o["offline"] = since.map { now - $0 > offlineAfter } ?? true
            if row.gone { o["gone"] = true }
            if row.keyless { o["keyless"] = true }
            if let sent = row.sent { o["sent"] = sent.action; o["sentAge"] = Int((now - sent.at) / .milliseconds(1)) }
            if let refusal = row.refusal { o["refusal"] = refusal }
            if let stop = row.stop { o["stop"] = stop }
            if let name = row.name { o["name"] = name }
            if let students = roster?.students(of: row.name ?? row.label), !students.isEmpty { o["students"] = students }
            if let address = row.address { o["address"] = address }
            if let unverified = row.unverified { o["unverified"] = unverified }
            if let off = row.off { o["off"] = off }
            guard let r = row.report else { return o }
            if let students = roster?.students(of: r.name), !students.isEmpty { o["students"] = students }
            o["robotId"] = RobotID(value: r.robotID)?.text ?? String(r.robotID, radix: 16)
            o["driver"] = r.driver
            o["state"] = r.state.name
            if case .failsafe(let cause) = r.state { o["cause"] = cause.name }
            if case .boardMissing(let why) = r.state { o["text"] = why }
            if r.rttMeanMillis != WatchReport.unknown { o["rttMean"] = Int(r.rttMeanMillis); o["rttMax"] = Int(r.rttMaxMillis) }
            if r.lossPerMille != WatchReport.unknown { o["loss"] = Double(r.lossPerMille) / 10 }
            o["sps"] = Int(r.statesPerSecond)
            o["failsafes"] = Int(r.failsafes)
            o["board"] = r.board
            o["transport"] = r.transport
            o["version"] = r.version
            o["uptime"] = Int(r.uptimeSeconds)
            o["locked"] = r.lockedTo
            o["identifying"] = r.flags & WatchReport.identifyingFlag != 0
            return o
        }
        var message: [String: Any] = ["t": "rows", "rows": list, "dropped": dropped]
        if roster != nil { message["missing"] = missing }
        if let game {
            var g: [String: Any] = ["playing": game.playing, "round": game.round,
                                    "scores": game.standings.map { ["rank": $0.rank, "name": $0.name, "points": $0.points] as [String: Any] }]
            if let port = game.port { g["port"] = port }
            if let problem = game.problem { g["problem"] = problem }
            message["game"] = g
        }
        let data = (try? JSONSerialization.data(withJSONObject: message, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}

/// The dashboard's files, embedded like the phone page's.
enum TeacherAssets {
    enum File { case dashboard, script, style }

    static func response(_ file: File) -> Response {
        let (bytes, type): ([UInt8], String) = switch file {
        case .dashboard: (PackageResources.teacher_html, "text/html; charset=utf-8")
        case .script: (PackageResources.teacher_js, "text/javascript; charset=utf-8")
        case .style: (PackageResources.teacher_css, "text/css; charset=utf-8")
        }
        return response(bytes, type: type, status: .ok)
    }

    /// `plain`: served over `--plain-http`, and the form says what that means.
    static func login(status: HTTPResponse.Status, message: String?, plain: Bool = false) -> Response {
        var page = String(decoding: PackageResources.teacher_login_html, as: UTF8.self)
        let note = message.map { "<p class=\"error\" role=\"alert\">\(escape($0))</p>" } ?? ""
        page = page.replacingOccurrences(of: "<!--MESSAGE-->", with: note)
        if plain {
            page = page.replacingOccurrences(of: "<!--PLAIN-->", with: "<p class=\"plain\">Plain HTTP (<code>--plain-http</code>): the key "
                                             + "crosses the network unencrypted. Use it on one machine or on a network you trust only.</p>")
        }
        return response(Array(page.utf8), type: "text/html; charset=utf-8", status: status)
    }

    static func response(_ bytes: [UInt8], type: String, status: HTTPResponse.Status) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = type
        headers[.cacheControl] = "no-store"
        headers[.contentSecurityPolicy] = "default-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
