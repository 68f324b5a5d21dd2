import ArgumentParser
import CommandSupport

/// `analog-remote-web`: the phone page and the teacher's dashboard, a program of its own so that
/// the robot's `analog-remote` links no web server, TLS or certificates (`analog-remote web` runs it).
@main
enum AnalogRemoteWeb {
    static func main() {
        do {
            var command = try Web.parseAsRoot(Array(CommandLine.arguments.dropFirst()))
            try command.run()
        } catch {
            failCommand(error, as: Web.self)
        }
    }
}
