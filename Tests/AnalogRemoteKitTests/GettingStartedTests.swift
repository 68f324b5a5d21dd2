import Foundation
import TestSupport
import Testing

/// The getting-started snippet (GettingStarted.swift) is the code the docs show, character for
/// character, and it moves the motors of a receiver on the simulated board.
@Suite(.serialized) struct GettingStartedTests {
    /// The snippet's text, between the first `import` and the end of the file.
    static var snippet: String {
        get throws {
            let text = try String(contentsOf: Paths.repositoryFile("Tests/AnalogRemoteKitTests/GettingStarted.swift"), encoding: .utf8)
            return text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    /// The first ```swift block after `marker` in a Markdown file.
    static func block(in file: String, after marker: String) throws -> String? {
        let text = try String(contentsOf: Paths.repositoryFile(file), encoding: .utf8)
        guard let start = text.range(of: marker),
              let open = text.range(of: "```swift\n", range: start.upperBound..<text.endIndex),
              let close = text.range(of: "\n```", range: open.upperBound..<text.endIndex) else { return nil }
        return String(text[open.upperBound..<close.lowerBound]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The user guide, the DocC article and (once it has the section) the README show exactly
    /// the code this test target compiles.
    @Test func docsShowTheCompiledSnippet() throws {
        let snippet = try Self.snippet
        #expect(snippet.split(separator: "\n").count <= 20, "the snippet is meant to be 20 lines at most")
        let guide = try Self.block(in: "docs/swift-api.md", after: "<!-- getting-started: Tests/AnalogRemoteKitTests/GettingStarted.swift -->")
        #expect(guide == snippet, "docs/swift-api.md differs from GettingStarted.swift")
        let article = try Self.block(in: "Sources/AnalogRemoteKit/AnalogRemoteKit.docc/GettingStarted.md",
                                     after: "<!-- getting-started: Tests/AnalogRemoteKitTests/GettingStarted.swift -->")
        #expect(article == snippet, "the DocC article differs from GettingStarted.swift")
        let readme = try #require(try Self.block(in: "README.md", after: "## Use it from Swift"), "README has no \"Use it from Swift\" section")
        #expect(readme == snippet, "README's \"Use it from Swift\" differs from GettingStarted.swift")
    }

    /// Run against `receive --board sim`: the motors drive forward while it runs, and are at rest
    /// once it returned.
    @Test func snippetDrivesTheSimulatedBoard() async throws {
        let receiver = try SimulatedReceiver()
        let address = receiver.address
        let run = Task { try await driveAndTurn(address: address) }
        #expect(await receiver.wait(timeout: .seconds(20)) { $0.drivesForward }, "motors never drove forward: \(receiver.process.stdout.suffix(400))")
        // The turn: right wheel slower than the left (a right turn), both still forward.
        #expect(await receiver.wait { r in r.motors.map { -Int($0.left) > Int($0.right) && $0.right >= 0 } ?? false },
                "never turned right: \(receiver.process.stdout.suffix(400))")
        try await run.value
        #expect(receiver.atRest, "the motors still run after the snippet returned: \(receiver.motors.debugDescription)")
    }
}
