#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import SystemIO

/// The bench's children are ``SpawnedProcess``es; this adds what only the bench needs.
typealias Child = SpawnedProcess

extension SpawnedProcess {
    /// Starts a child for the bench; a failure is a setup error naming it.
    static func bench(executable: String, arguments: [String], label: String, withStdin: Bool = false) throws(BenchError) -> SpawnedProcess {
        do {
            return try SpawnedProcess(executable: executable, arguments: arguments, label: label, withStdin: withStdin)
        } catch {
            throw error.call == "pipe" ? .setup("\(label): pipe: \(error.reason)")
                : .setup("\(label): cannot start \(executable): \(error.reason)")
        }
    }

    /// Waits for a line of stdout that starts with `prefix`; returns the rest of it.
    func waitForLine(prefix: String, timeout: Duration, interruption: Interruption) throws(BenchError) -> Substring {
        let deadline = ContinuousClock.now + timeout
        while true {
            try interruption.check()
            for line in stdout.split(separator: "\n") where line.hasPrefix(prefix) {
                return line.dropFirst(prefix.count)
            }
            if hasExited || ContinuousClock.now >= deadline {
                let why = hasExited ? "exited (status \(exitStatus ?? -1))" : "said nothing for \(timeout)"
                let said = stderr.split(separator: "\n").suffix(3).joined(separator: " | ")
                throw .setup("\(label) \(why) before printing `\(prefix)…`\(said.isEmpty ? "" : ": \(said)")")
            }
            Monotonic.sleep(nanoseconds: 2_000_000)
        }
    }

    /// A receiver child: `analog-remote receive …`, or, when the environment variable
    /// `BENCH_RECEIVER_WRAPPER` is set (e.g. `valgrind --tool=callgrind`), that command with
    /// the receiver's command line appended — how BENCHMARKS.md's profiles were taken.
    static func receiver(executable: String, arguments: [String]) throws(BenchError) -> SpawnedProcess {
        let wrapper = ProcessInfo.processInfo.environment["BENCH_RECEIVER_WRAPPER"]?
            .split(separator: " ").map(String.init) ?? []
        guard let tool = wrapper.first else {
            return try bench(executable: executable, arguments: ["receive"] + arguments, label: "receiver")
        }
        let path = tool.hasPrefix("/") ? tool : try which(tool)
        return try bench(executable: path, arguments: Array(wrapper.dropFirst()) + [executable, "receive"] + arguments,
                         label: "receiver (under \(tool))")
    }

    static func which(_ name: String) throws(BenchError) -> String {
        if let path = ExternalCommand.find(name, beside: nil, path: ProcessInfo.processInfo.environment["PATH"]) { return path }
        throw .setup("BENCH_RECEIVER_WRAPPER: \(name) is not on PATH")
    }

    /// The path of the running executable (this `analog-remote`).
    static func ownExecutable() throws(BenchError) -> String {
        guard let path = ExternalCommand.ownExecutable() else { throw .setup("cannot find this executable (/proc/self/exe)") }
        return path
    }
}
