import ArgumentParser
import CommandSupport
import StopAll
import Discovery
import RemoteWire
import SystemIO

struct StopAll: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop-all",
        abstract: "Teacher's stop: every receiver of a session stops its robot and holds it until released.",
        discussion: """
            First sends the signed stop for the session to every host on the links (each interface's IPv4 \
            broadcast address and IPv6 all-nodes ff02::1, port \(ReceiverPort.standard), three times): every receiver of the \
            session on the default port stops before any lookup (--no-broadcast: not). Then finds the session's \
            receivers (DNS-SD, for --timeout seconds) or takes them from --peer (no broadcast then), and \
            sends each the signed stop the moment it is known (aimed at its robot id when it announces one, \
            else at the session), up to 10 times over half a second, until it answers; a release first asks \
            each receiver its name and robot id and is then signed for that robot alone. Receivers \
            obey only a stop-all for their own session (`receive --session`). A receiver that takes it sets the \
            motors to 0 and holds them there, whatever its controllers send, until `stop-all --release`; \
            after the release it waits for a resting state. Receivers started with --teacher-key obey only a \
            command signed with the same key. Prints one line per receiver as it answers (`stopped "NAME" \
            ADDRESS`, `released …`, `refused by …: WHY`), then `no answer from …` and `reached N of M \
            receivers`. The receivers that took a stop-all of the session are kept in the state directory \
            ($XDG_STATE_HOME/analog-remote, default ~/.local/state/analog-remote) and get the next one at once, \
            before DNS-SD has answered; one that no longer answers there and is not listed is left out. With --robot ID, only that robot gets the command (a clone with the same name refuses it). \
            Exit 0 when every receiver took it, 1 otherwise; 5 without an mDNS responder (use --peer) — unless it broadcast the stop or knows receivers from the last run: then it stops those that answer, says so, and exits as above.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: "The session ID of the class (as given to the receivers).")
    var session: String

    @Flag(help: "Release the robots instead of stopping them.")
    var release = false

    @Option(help: ArgumentHelp("Sign the command with this key (receivers started with the same teacher key require it). Unsafe: every user of this machine can read it with ps; prefer --teacher-key-file.",
                               valueName: "key"))
    var teacherKey: String?

    @Option(help: ArgumentHelp("Sign the command with the key in this file (`analog-remote keygen` makes one; only its owner may read it: chmod 600).",
                               valueName: "file"))
    var teacherKeyFile: String?

    @Option(help: ArgumentHelp("Address a receiver directly, without DNS-SD (repeatable); the port defaults to \(ReceiverPort.standard).", valueName: "host[:port]"))
    var peer: [String] = []

    @Option(help: "Seconds to look for the session's receivers (DNS-SD).")
    var timeout: Double = 2

    @Option(help: ArgumentHelp("Only the robot with this robot id (8 characters, as `browse` shows in robot= and `receive` logs at start; repeatable). Robots cloned with one host name share a display name, never a robot id.",
                               valueName: "id"))
    var robot: [String] = []

    @Flag(help: "Do not broadcast the stop to the links first: only receivers found by DNS-SD or known from the last run get it.")
    var noBroadcast = false

    func validate() throws {
        do { _ = try SessionID(session) } catch { throw ValidationError("--session: \(error)") }
        guard timeout > 0, timeout <= 60 else { throw ValidationError("--timeout must be in 0…60 seconds") }
        for p in peer where SocketAddress.withDefaultPort(p, port: ReceiverPort.standard) == nil {
            throw ValidationError("--peer \(p): expected HOST, IPv4 or [IPv6], optionally with :PORT (1…65535; default \(ReceiverPort.standard)).")
        }
        if let teacherKey, teacherKey.isEmpty { throw ValidationError("--teacher-key is empty") }
        if teacherKey != nil, teacherKeyFile != nil { throw ValidationError("--teacher-key and --teacher-key-file: give one") }
        for r in robot where RobotID(r) == nil {
            throw ValidationError("--robot \(JSONText.quote(r)): a robot id is 8 characters of 0-9 and a-z without i, l, o, u (e.g. k3m9x2ab)")
        }
    }

    func run() throws {
        try runReporting {
            let key = try SecretArguments.teacherKey(inline: teacherKey, file: teacherKeyFile)
            let status = global.bootstrap()
            return try StopAllCommand.run(.init(session: session, release: release, teacherKey: key,
                                                peers: peer.compactMap { SocketAddress.withDefaultPort($0, port: ReceiverPort.standard) },
                                                timeout: .milliseconds(Int(timeout * 1000)),
                                                robots: Set(robot.compactMap { RobotID($0) }),
                                                stateDirectory: StateDirectory.path(environment: StateDirectory.processEnvironment),
                                                broadcast: !noBroadcast),
                                         status: status)
        }
    }
}
