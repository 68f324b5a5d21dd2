#if canImport(Glibc)
import CommandSupport
import Glibc
#endif
import ArgumentParser
import Console
import ErrorReporting
import Receiver
import SystemIO

/// `analog-remote reload`: the service's `ExecReload=`. Signals the receiver (SIGHUP) and
/// returns only once it has the new configuration in force or has refused it, so that
/// `systemctl reload analog-remote` means what it says on systemd 252 too (which takes a
/// reload as finished when this command exits).
struct Reload: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reload",
        abstract: "Make a running receiver read its configuration again, and wait until it has (the service's ExecReload).",
        discussion: """
            Sends SIGHUP to the receiver with --pid, then waits for the receipt the receiver \
            leaves in its runtime directory after the reload (/run/analog-remote under the \
            service, where systemd sets RUNTIME_DIRECTORY). Prints the receiver's one line \
            and exits 0 when the new configuration is in force (or nothing changed); exit 2 \
            when the receiver refused it (a bad config: the running one stays, the line says \
            why); exit 1 when there is no such receiver or it did not answer within --timeout.

            The service runs it as `ExecReload=analog-remote reload --pid $MAINPID`: use \
            `sudo systemctl reload analog-remote` rather than running it by hand.
            """)

    @Option(help: ArgumentHelp("The receiver's process id (systemd's $MAINPID).", valueName: "pid"))
    var pid: Int32

    @Option(help: ArgumentHelp("The receiver's runtime directory, where it leaves its reload receipt (default: $RUNTIME_DIRECTORY).",
                               valueName: "dir"))
    var receipts: String?

    @Option(help: ArgumentHelp("How long to wait for the receiver's answer, in seconds.", valueName: "s"))
    var timeout: Double = 10

    func validate() throws {
        if pid <= 0 { throw ValidationError("--pid must be a receiver's process id (> 0), not \(pid)") }
        if !(timeout > 0 && timeout <= 600) { throw ValidationError("--timeout must be between 0 and 600 seconds") }
    }

    func run() throws {
        try runReporting {
            guard let directory = receipts ?? getenv("RUNTIME_DIRECTORY").map({ String(cString: $0) })?
                    .split(separator: ":").first.map(String.init) else {
                throw UserFacingError("reload needs the receiver's runtime directory: it runs as the service's ExecReload (systemd sets RUNTIME_DIRECTORY), or give --receipts DIR",
                                      status: .badConfiguration)
            }
            let path = directory + "/" + ReloadReceipt.fileName
            let before = Self.receipt(path)
            guard kill(pid, SIGHUP) == 0 else {
                let why = errno == ESRCH ? "no such process" : String(cString: strerror(errno))
                throw UserFacingError("cannot signal the receiver (pid \(pid)): \(why); is analog-remote running? (systemctl status analog-remote)",
                                      status: .failure)
            }
            let deadline = Tick.now() + Tick.nanoseconds(.milliseconds(Int64(timeout * 1000)))
            while Tick.now() < deadline {
                if let receipt = Self.receipt(path), receipt.pid == pid, receipt != before {
                    switch receipt.outcome {
                    case .applied, .unchanged:
                        StandardOutput.write("reloaded: \(receipt.text)\n")
                        return .done
                    case .refused:
                        throw UserFacingError("reload refused, the running configuration stays: \(receipt.text)", status: .badConfiguration)
                    }
                }
                var pause = timespec(tv_sec: 0, tv_nsec: 2_000_000)
                nanosleep(&pause, nil)
            }
            throw UserFacingError("the receiver (pid \(pid)) did not confirm the reload within \(timeout) s: see its log (journalctl -u analog-remote)",
                                  status: .failure)
        }
    }

    static func receipt(_ path: String) -> ReloadReceipt? {
        guard let bytes = try? FileContents.read(path: path, limit: 4096) else { return nil }
        return ReloadReceipt(line: String(decoding: bytes, as: UTF8.self))
    }
}
