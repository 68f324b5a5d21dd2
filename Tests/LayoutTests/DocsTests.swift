import Foundation
import TestSupport
import Testing

/// The docs a newcomer walks: a short README, links that lead somewhere, and a module graph in
/// docs/ARCHITECTURE.md that is the manifest's (scripts/module-graph.py writes it).
@Suite struct DocsTests {
    /// README.md, Protocol.md and every docs/*.md, by repository-relative path.
    static func documents() throws -> [String: String] {
        var paths = ["README.md", "Protocol.md", "BENCHMARKS.md"]
        let docs = try FileManager.default.contentsOfDirectory(atPath: Paths.repositoryFile("docs").path)
        paths += docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/\($0)" }
        var out: [String: String] = [:]
        for path in paths {
            out[path] = try String(contentsOf: Paths.repositoryFile(path), encoding: .utf8)
        }
        return out
    }

    @Test func theReadmeIsTheFrontDoorNotTheManual() throws {
        let lines = try String(contentsOf: Paths.repositoryFile("README.md"), encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false).count - 1
        #expect(lines <= 300, "README.md has \(lines) lines; keep it at most 300: a feature's details go into its guide under docs/")
    }

    @Test func everyRelativeLinkOfTheDocsLeadsToAFileAndHeading() throws {
        let documents = try Self.documents()
        #expect(documents.keys.contains("docs/ARCHITECTURE.md"))
        #expect(documents.count >= 14, "README, Protocol, BENCHMARKS and the guides under docs/")
        let links = DocLinks(documents: documents) { FileManager.default.fileExists(atPath: Paths.repositoryFile($0).path) }
        let problems = documents.keys.sorted().flatMap(links.problems(in:))
        #expect(problems.isEmpty, "\(problems.count) broken links:\n\(problems.joined(separator: "\n"))")
    }

    // The two module-graph tests run SwiftPM (seconds; far longer under the full suite's load):
    // waited for off the concurrency pool every async test needs (`ChildProcess.exited`).

    @Test func theModuleGraphInArchitectureIsGeneratedFromTheCurrentManifest() async throws {
        let check = try ChildProcess(URL(fileURLWithPath: "/usr/bin/env"),
                                     ["python3", Paths.repositoryFile("scripts/module-graph.py").path, "--check"])
        let status = await check.exited(timeout: .seconds(120))
        #expect(status == 0, "\(check.stderr.trimmingCharacters(in: .whitespacesAndNewlines))")
    }

    /// The check fails, with what to run, when the manifest has an edge the committed graph lacks.
    @Test func aManifestChangeWithoutANewGraphFailsTheCheck() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("module-graph-test-\(ProcessInfo.processInfo.processIdentifier)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let dump = try ChildProcess(URL(fileURLWithPath: "/usr/bin/env"),
                                    ["swift", "package", "--package-path", Paths.repositoryRoot.path,
                                     "--scratch-path", scratch.path, "dump-package"])
        #expect(await dump.exited(timeout: .seconds(120)) == 0, "\(dump.stderr)")
        var package = try #require(JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        var targets = try #require(package["targets"] as? [[String: Any]])
        let codec = try #require(targets.firstIndex { $0["name"] as? String == "RemoteWire" })
        let systemIO: [String: Any] = ["byName": ["SystemIO", NSNull()] as [Any]]
        targets[codec]["dependencies"] = [systemIO]
        package["targets"] = targets
        let changed = FileManager.default.temporaryDirectory.appendingPathComponent("module-graph-test-\(ProcessInfo.processInfo.processIdentifier).json")
        try JSONSerialization.data(withJSONObject: package).write(to: changed)
        defer { try? FileManager.default.removeItem(at: changed) }

        let check = try ChildProcess(URL(fileURLWithPath: "/usr/bin/env"),
                                     ["python3", Paths.repositoryFile("scripts/module-graph.py").path, "--check",
                                      "--json", changed.path])
        #expect(await check.exited(timeout: .seconds(60)) == 1)
        #expect(check.stderr == "module-graph: the module graph in docs/ARCHITECTURE.md does not match Package.swift: "
                + "run scripts/module-graph.py and commit docs/ARCHITECTURE.md\n")
    }

    // The link checker itself, on small documents that break each part.

    static func checker(_ documents: [String: String], files: Set<String> = []) -> DocLinks {
        DocLinks(documents: documents) { files.contains($0) || documents[$0] != nil }
    }

    @Test func linksToFilesAndHeadingsThatExistPass() {
        let links = Self.checker([
            "README.md": "# Top\nSee [the guide](docs/guide.md#inputs---input), [a section](#top), ![pic](docs/p.png).\n",
            "docs/guide.md": "# Guide\n## Inputs (`--input`)\nBack to the [README](../README.md#top) or [far away](https://example.org/x).\n",
        ], files: ["docs/p.png"])
        #expect(links.problems(in: "README.md") == [])
        #expect(links.problems(in: "docs/guide.md") == [])
    }

    @Test func aLinkToAMissingFileIsReportedWithItsLine() {
        let links = Self.checker(["README.md": "# Top\n\nSee [the guide](docs/gone.md).\n"])
        #expect(links.problems(in: "README.md") == ["README.md:3: docs/gone.md does not exist"])
    }

    @Test func aLinkToAMissingHeadingIsReported() {
        let links = Self.checker([
            "README.md": "# Top\n[x](docs/guide.md#outputs)\n",
            "docs/guide.md": "# Guide\n## Inputs\n```sh\n# outputs\n```\n",
        ])
        #expect(links.problems(in: "README.md") == ["README.md:2: docs/guide.md has no heading with the anchor #outputs"])
    }

    @Test func linksInCodeAreNotLinks() {
        let links = Self.checker(["README.md": "# Top\n`[x](nowhere.md)` and\n```\n[y](nowhere.md)\n```\n"])
        #expect(links.problems(in: "README.md") == [])
    }

    @Test func repeatedHeadingsGetNumberedAnchorsAsOnGitHub() {
        #expect(DocLinks.anchors(of: "# Notes\n## Notes\n### 6.4 Resolving and following\n")
                == ["notes", "notes-1", "64-resolving-and-following"])
    }
}
