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
/// TeacherAuth.swift), its script, the lesson's log as CSV, and `/teacher/ws`, which looks at the
/// rows when one changed (``TeacherLink/changes``) or a while after its last look, pushes what
/// changed (``TeacherPush``) and takes the teacher's buttons. Without the cookie every one of
/// them but the form and its style sheet answers 401, and the socket is not upgraded.
struct TeacherDashboard: Sendable {
    let auth: TeacherAuth
    let link: TeacherLink
    /// The button game, started and ended from the dashboard (TeacherGame.swift).
    let game: TeacherGame
    /// The robots' round (TeacherRobotGame.swift); one game at a time with the button game.
    let robotGame: TeacherRobotGame
    let logger: Logger

    /// Each open dashboard's rows are looked at this long after its last look (the ages and
    /// `offline` that move with time alone, and the dashboard's "still open" for the watch:
    /// well within ``TeacherCommand/watchLifetime``)…
    static let pushPeriod: Duration = .seconds(1)
    /// …this often while a robot is driven (its tile shows it heard "just now": its reports'
    /// ages, which move no row's version)…
    static let drivingPushPeriod: Duration = .milliseconds(250)
    /// …and at a change of a row (or the game), but never sooner than this after the last look
    /// (30 robots report 60 times a second together: one push per report would cost the server
    /// more than the reports).
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
            if auth.logout(request.headers) {
                link.events.record(robot: "", event: "logout", detail: "teacher logged out")
                link.nudge()   // its dashboards look now, find the session over and close
            }
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
    /// obeyed, a Close (4401) goes out at once (the logout wakes the push; the expiry is one of
    /// its deadlines), and the connection is cut 1 s later if the page has not closed it by then.
    /// Between changes the push sleeps: it wakes for a change, its next look or the expiry only.
    func serve(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, session token: String,
               cut: @escaping @Sendable () -> Void) async throws {
        link.dashboardOpen()
        await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                var pushed: (seen: Int, at: ContinuousClock.Instant)?
                var period = Self.pushPeriod
                // The next row to turn OFFLINE by silence alone: looked at then, not a period later.
                var offline: ContinuousClock.Instant?
                var push = TeacherPush(epoch: .now)
                while !Task.isCancelled {
                    guard auth.isLive(token) else {
                        try? await outbound.close(Self.sessionEnded, reason: "the teacher logged out")
                        try? await Task.sleep(for: .seconds(1))
                        cut()
                        return
                    }
                    let now = ContinuousClock.now, seen = link.changes.count
                    if let last = pushed, now - last.at < period, offline.map({ now < $0 }) ?? true {
                        // Woken early: a change, but not before the soonest next look.
                        if seen != last.seen, now - last.at < Self.pushSoonest {
                            try await Task.sleep(for: Self.pushSoonest - (now - last.at))
                            continue
                        }
                        if seen == last.seen {
                            await link.changes.wait(past: seen, timeout: wait(until: min(last.at + period, offline ?? last.at + period),
                                                                             token: token))
                            continue
                        }
                    }
                    link.dashboardOpen()
                    let rows = link.rows()
                    period = rows.contains { $0.report?.state == .driving } ? Self.drivingPushPeriod : Self.pushPeriod
                    if let text = push.next(rows, now: now, roster: link.roster, missing: link.missing(), game: game.snapshot,
                                            dropped: link.droppedReports, watchingSince: link.watchingSince,
                                            robotGame: robotGame.snapshot) {
                        try await outbound.write(.text(text))
                    }
                    pushed = (seen, now)
                    offline = TeacherRows.nextOffline(rows, now: now, watchingSince: link.watchingSince)
                    await link.changes.wait(past: seen, timeout: wait(until: min(now + period, offline ?? now + period), token: token))
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

    /// How long a push may sleep: until `look`, or the session's expiry if sooner.
    private func wait(until look: ContinuousClock.Instant, token: String) -> Duration {
        let end = auth.expiry(token).map { min($0, look) } ?? look
        return max(.zero, end - .now)
    }

    /// `{"t":"stop"|"release"|"identify"|"kick"|"lock"|"unlock","robot":ID|"*","arg":TEXT}`,
    /// `{"t":"dismiss","robot":ID}` (forget a silent robot's row), `{"t":"game-start"}`,
    /// `{"t":"game-end"}`, `{"t":"robot-game-start","rule":"switch"}`,
    /// `{"t":"robot-game-start","rule":"hold","sensor":1…4,"side":"above"|"below","threshold":0…255,"seconds":S}`,
    /// `{"t":"robot-game-end"}`. A robot round's Start with a bad field is refused with a line
    /// the dashboard shows (``TeacherRobotGame/Board/notice``).
    func command(_ text: String) {
        guard let object = try? JSONDecoder().decode(DashboardCommand.self, from: Data(text.utf8)) else { return }
        let t = object.t
        switch t {
        case "game-start": game.start(); return
        case "game-end": game.end(); return
        case "robot-game-start":
            switch TeacherRobotRound.rule(object.rule, sensor: object.sensor, side: object.side, threshold: object.threshold,
                                          seconds: object.seconds) {
            case .failure(let refusal): robotGame.refuse(refusal.text)
            case .success(let rule):
                let (entrants, leftOut) = TeacherRobotRound.entrants(link.rows())
                robotGame.start(rule, entrants: entrants, leftOut: leftOut)
            }
            return
        case "robot-game-end": robotGame.end(); return
        default: break
        }
        guard let robot = object.robot else { return }
        if t == "dismiss" {
            if robot != "*" { link.dismiss(robot: robot) }
            return
        }
        let arg = String((object.arg ?? "").prefix(64))
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
        // Stop all is the emergency: every robot of the session on the links first, by broadcast.
        if robot == "*", case .stop = command { link.stopEveryone() }
        let targets = robot == "*" ? link.rows().map(\.id) : [robot]
        for id in targets { link.enqueue(command, robot: id) }
        link.events.record(robot: robot == "*" ? "all" : robot, event: "teacher-\(t)", detail: arg)
    }

    /// What a dashboard sends on its WebSocket (see ``command(_:)``); anything else is ignored.
    struct DashboardCommand: Decodable {
        var t: String
        var robot: String?
        var arg: String?
        /// A robot round's rule and its fields: a field of the wrong type reads as absent (the
        /// Start is then refused with a line saying which field), never as a bad command.
        var rule: String?
        var sensor: Int?
        var side: String?
        var threshold: Int?
        var seconds: Double?

        enum CodingKeys: String, CodingKey { case t, robot, arg, rule, sensor, side, threshold, seconds }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            t = try c.decode(String.self, forKey: .t)
            robot = try c.decodeIfPresent(String.self, forKey: .robot)
            arg = try c.decodeIfPresent(String.self, forKey: .arg)
            rule = try? c.decodeIfPresent(String.self, forKey: .rule)
            sensor = try? c.decodeIfPresent(Int.self, forKey: .sensor)
            side = try? c.decodeIfPresent(String.self, forKey: .side)
            threshold = try? c.decodeIfPresent(Int.self, forKey: .threshold)
            seconds = try? c.decodeIfPresent(Double.self, forKey: .seconds)
        }
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
