import Foundation
import FuzzHarnesses
import Testing
import TestSupport

/// Every harness over its seed corpus and every input a fuzzer once crashed on
/// (`Fuzz/corpus/NAME/`): a finding, once fixed, stays fixed without libFuzzer in the build.
@Suite struct CorpusReplayTests {
    static func corpus(_ harness: Harness) throws -> [(name: String, bytes: [UInt8])] {
        let dir = Paths.repositoryFile("Fuzz/corpus/\(harness.rawValue)")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        return try names.map { name in
            (name, Array(try Data(contentsOf: dir.appendingPathComponent(name))))
        }
    }

    @Test("every harness has a seed corpus", arguments: Harness.allCases)
    func hasSeeds(_ harness: Harness) throws {
        #expect(try Self.corpus(harness).count >= 3)
    }

    @Test("every corpus input runs through its harness", arguments: Harness.allCases)
    func replay(_ harness: Harness) throws {
        for input in try Self.corpus(harness) {
            harness.run(input.bytes)
        }
    }

    @Test("the harnesses take the empty input and single bytes", arguments: Harness.allCases)
    func tiny(_ harness: Harness) {
        harness.run([])
        for byte in UInt8.min...UInt8.max { harness.run([byte]) }
    }
}
