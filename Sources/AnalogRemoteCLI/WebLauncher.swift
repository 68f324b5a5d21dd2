#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import CommandSupport
import ErrorReporting
import SystemIO

/// `analog-remote web …`: the phone page and the teacher's dashboard are a program of their own,
/// `analog-remote-web` (package analog-remote-web), so that a robot's binary carries no web server,
/// TLS or certificates. This command runs it in place of itself, with the same arguments.
///
/// ``AnalogRemote/main()`` hands `web` (and `help web`) here before anything is parsed; the
/// command is declared only so that `analog-remote --help` lists it and a typo near it is caught.
struct Web: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web",
        abstract: "Serve the phone page and the teacher's dashboard (runs analog-remote-web: `analog-remote web --help` for its options).",
        discussion: """
            Runs `analog-remote-web` with the same arguments, found beside this executable or on PATH. \
            It is a package of its own (analog-remote-web), which a robot does not need. Without it: \
            one line saying how to install it, exit 127.
            """)

    @Argument(parsing: .captureForPassthrough) var arguments: [String] = []

    static let program = "analog-remote-web"

    func run() throws { Self.replaceProcess(arguments: arguments) }

    static func replaceProcess(arguments: [String]) -> Never {
        let own = ExternalCommand.ownExecutable()
        guard let path = ExternalCommand.find(program, beside: own, path: getenv("PATH").map { String(cString: $0) }) else {
            printError("analog-remote: `web` needs \(program), which is not installed beside \(own ?? "this program") nor on PATH: install the package (sudo apt install ./\(program)_*.deb), or build it (swift build --product \(program))")
            Glibc.exit(ExitStatus.notInstalled.rawValue)
        }
        do {
            try ExternalCommand.replaceProcess(with: path, arguments: arguments)
        } catch {
            printError("analog-remote: `web` could not run \(path): \(error.reason) (reinstall the \(program) package)")
            Glibc.exit(ExitStatus.notInstalled.rawValue)
        }
    }
}
