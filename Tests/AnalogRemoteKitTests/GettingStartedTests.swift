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

    /// Run against `receive --board sim`: the traced maps show it driving forward, then a right
    /// turn (both wheels still forward, the right one slower), and the motors at rest once it
    /// returned. Judged on the whole trace, not sampled live: a loaded machine may run the half
    /// second of the turn between two looks.
    @Test func snippetDrivesTheSimulatedBoard() async throws {
        let receiver = try SimulatedReceiver()
        try await driveAndTurn(address: receiver.address)
        #expect(await receiver.wait { $0.atRest }, "the motors still run after the snippet returned: \(receiver.motors.debugDescription)")
        let motors = receiver.maps.compactMap { map in
            map.count > 0x23 ? (left: -Int(Int8(bitPattern: map[0x22])), right: Int(Int8(bitPattern: map[0x23]))) : nil
        }
        let forward = motors.firstIndex { $0.left > 0 && $0.right > 0 }
        #expect(forward != nil, "motors never drove straight ahead: \(receiver.process.stdout.suffix(400))")
        let turn = motors.indices.first { $0 > (forward ?? motors.endIndex) && motors[$0].left > motors[$0].right && motors[$0].right >= 0 }
        #expect(turn != nil, "never turned right after driving ahead: \(receiver.process.stdout.suffix(400))")
    }
}
