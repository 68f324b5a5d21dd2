import Foundation
import TestSupport
import Testing

/// `receive` binds the fixed default port 27183 unless told otherwise. Tests run concurrently in
/// this machine's own network namespace, so a test (or the bench, or the demo) that starts a
/// receiver without `--port` would collide with another one doing the same (exit 4); the fixed
/// port is used only inside the two-host test's network namespaces. This checks that every
/// argument list starting `receive` in Tests/, the bench and the demo names a port.
@Suite struct DefaultPortTests {
    @Test func everyReceiverStartedByTestsOrTheBenchNamesItsPort() throws {
        let root = Paths.repositoryFile("")
        var offenders: [String] = []
        for dir in ["Tests", "Sources/Bench", "Sources/AnalogRemoteCLI"] {
            let base = root.appendingPathComponent(dir)
            guard let files = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else { continue }
            for case let url as URL in files where url.pathExtension == "swift" && url.lastPathComponent != "DefaultPortTests.swift" {
                let text = try String(contentsOf: url, encoding: .utf8)
                for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                where line.contains("[\"receive\"") && !line.contains("\"--port\"") {
                    // `Child.receiver(…)` in the bench takes its arguments from the callers, checked below.
                    if line.contains("arguments: [\"receive\"] + arguments") { continue }
                    offenders.append("\(dir)/\(url.lastPathComponent):\(n + 1): \(line.trimmingCharacters(in: .whitespaces))")
                }
                for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                where line.contains("Child.receiver(") {
                    let window = text.split(separator: "\n", omittingEmptySubsequences: false).dropFirst(n).prefix(4).joined()
                    if !window.contains("\"--port\"") && !text.contains("\"--port\", \"0\"") {
                        offenders.append("\(dir)/\(url.lastPathComponent):\(n + 1): Child.receiver without --port")
                    }
                }
            }
        }
        #expect(offenders.isEmpty, "start receivers with --port 0 (27183 is the default now):\n\(offenders.joined(separator: "\n"))")
    }
}
