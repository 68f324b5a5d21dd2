import Discovery
import Logging
import PhoneLink
import RemoteWire
import SystemIO

/// `web --teacher-key-file FILE [--log-dir DIR]`: the dashboard's pieces, or nil without a key.
enum TeacherSetup {
    static func dashboard(_ options: WebOptions, hub: PhoneHub, roster: Roster?, logger: Logger) throws -> TeacherDashboard? {
        guard let file = options.teacherKeyFile else { return nil }
        let key: String
        do {
            key = try TeacherKeyFile.read(file)
        } catch {
            throw CommandFailure("web: \(error)", kind: .badConfiguration)
        }
        let log: TeacherLog
        do {
            log = try TeacherLog(directory: options.logDirectory)
        } catch {
            throw CommandFailure("web: --log-dir \(options.logDirectory ?? ""): cannot write the lesson's log there: \(error)",
                                 kind: .badConfiguration)
        }
        // Receivers found by address have no announced session: they take the default one.
        let session = options.session.isEmpty ? "AnalogRemote" : options.session
        var onProven: (@Sendable ([(address: SocketAddress, robot: RobotID?)]) -> Void)?
        if let tell = options.provenRobots { onProven = { robots in tell(session, robots) } }
        let link = try TeacherLink(hub: hub, teacherKey: key, session: session, events: log, roster: roster, logger: logger,
                                   onProven: onProven)
        link.start()
        if let path = log.path { logger.notice("the lesson's log: \(path)") }
        var plain = false
        if case .plainHTTP = options.security { plain = true }
        return try assemble(link: link, key: key, secureCookie: !plain, gameHost: options.host,
                            gameName: "\(HostName.current() ?? "class") game", session: options.session, events: log, logger: logger)
    }

    /// The dashboard around a link: both games on one floor (one at a time), the robots' round fed
    /// only with the reports the link took (verified under the teacher key), and each game's
    /// change pushed by the link.
    static func assemble(link: TeacherLink, key: String, secureCookie: Bool, gameHost: String, gameName: String,
                         session: String, events: TeacherLog, logger: Logger) throws -> TeacherDashboard {
        let floor = GameFloor()
        let game = try TeacherGame(host: gameHost, name: gameName, session: session, events: events, logger: logger,
                                   floor: floor, changed: { [link] in link.nudge() })
        let robotGame = try TeacherRobotGame(floor: floor, events: events, logger: logger, changed: { [link] in link.nudge() })
        link.onReportTaken { [robotGame] report, at in robotGame.report(report, at: at) }
        return TeacherDashboard(auth: TeacherAuth(key: key, secureCookie: secureCookie), link: link, game: game, robotGame: robotGame,
                                logger: logger)
    }
}
