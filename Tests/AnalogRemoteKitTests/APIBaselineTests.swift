import Foundation
import Synchronization
import TestSupport
import Testing

/// AnalogRemoteKit's public API, pinned: the declarations in the module's symbol graph (public
/// and open only) must equal api/AnalogRemoteKit.api. A change fails here until the baseline is
/// rewritten on purpose (`ANALOG_REMOTE_UPDATE_API=1`), and the version is bumped as
/// docs/swift-api.md "API stability and versions" says.
@Suite struct APIBaselineTests {
    static let baseline = "api/AnalogRemoteKit.api"

    /// The Kit's own declarations, then those of the types it re-exports (`Buttons`, from
    /// RemoteWire): a program sees both through `import AnalogRemoteKit`.
    static func current() async throws -> [String] {
        let reexported = try await PublicAPI.extract(module: "RemoteWire").filter { line in
            let path = line.split(separator: " ", maxSplits: 1).dropFirst().first ?? ""
            return path.hasPrefix("Buttons:") || path.hasPrefix("Buttons.")
        }
        return (try await PublicAPI.extract(module: "AnalogRemoteKit") + reexported).sorted()
    }

    @Test func publicAPIMatchesTheBaseline() async throws {
        let current = try await Self.current()
        let url = Paths.repositoryFile(Self.baseline)
        if ProcessInfo.processInfo.environment["ANALOG_REMOTE_UPDATE_API"] == "1" {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try (PublicAPI.header + current.joined(separator: "\n") + "\n").write(to: url, atomically: true, encoding: .utf8)
        }
        let pinned = try String(contentsOf: url, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: true)
            .map(String.init).filter { !$0.hasPrefix("#") }
        let removed = Set(pinned).subtracting(current).sorted()
        let added = Set(current).subtracting(pinned).sorted()
        let diff = (removed.map { "- \($0)" } + added.map { "+ \($0)" }).joined(separator: "\n")
        #expect(removed.isEmpty && added.isEmpty, """
            The public API of AnalogRemoteKit differs from \(Self.baseline):
            \(diff)
            If this is deliberate: bump the version (removed or changed → minor, only added → patch; \
            docs/swift-api.md) and rewrite the baseline with
              ANALOG_REMOTE_UPDATE_API=1 swift test --skip-build --filter APIBaselineTests
            """)
    }

    /// The extraction sees what it should: a known type and member are there, internal ones are not.
    @Test func extractionSeesPublicOnly() async throws {
        let current = try await PublicAPI.extract(module: "AnalogRemoteKit")
        #expect(current.contains { $0.hasPrefix("class RobotController: ") })
        #expect(current.contains { $0.hasPrefix("method RobotController.send(tilt:buttons:): ") })
        #expect(!current.contains { $0.contains("SessionEngine") || $0.contains("Broadcast") })
        let pinned = try await Self.current()
        #expect(pinned.contains { $0.hasPrefix("struct Buttons: ") })
        #expect(pinned.contains { $0.hasPrefix("type.property Buttons.l3: ") })
        #expect(!pinned.contains { $0.contains("StatePacket") })
    }
}

/// One line per public declaration, from `swift-symbolgraph-extract` run with the flags the build
/// compiled the module with (read from SwiftPM's llbuild manifest, `.build/debug.yaml`).
enum PublicAPI {
    static let header = """
        # AnalogRemoteKit's public API (one line per declaration: kind, path, declaration; then
        # conformances). Checked by APIBaselineTests; rewrite with
        # ANALOG_REMOTE_UPDATE_API=1 swift test --skip-build --filter APIBaselineTests

        """

    struct Failure: Error, CustomStringConvertible { let description: String }

    /// One extraction per module for the whole test run, shared by every test that asks.
    private static let extractions = Mutex<[String: Task<[String], any Error>]>([:])

    /// The module's public declarations. The tool runs for seconds (a minute under the full
    /// suite's load) on a thread of its own, never on the concurrency pool (see `offThePool`).
    static func extract(module: String) async throws -> [String] {
        let extraction = extractions.withLock { running in
            if let task = running[module] { return task }
            let task = Task { try await offThePool("symbolgraph-\(module)") { try extractNow(module: module) } }
            running[module] = task
            return task
        }
        return try await extraction.value
    }

    private static func extractNow(module: String) throws -> [String] {
        let binDir = Paths.analogRemote.deletingLastPathComponent()          // .build/<triple>/debug
        let buildRoot = binDir.deletingLastPathComponent().deletingLastPathComponent()
        let manifest = buildRoot.appendingPathComponent("debug.yaml")
        guard let yaml = try? String(contentsOf: manifest, encoding: .utf8) else {
            throw Failure(description: "no \(manifest.path): build with `swift build --build-tests` first")
        }
        let args = try compileArguments(module: module, manifest: yaml)
        var flags: [String] = []
        var i = 0
        while i < args.count {
            switch args[i] {
            case "-I", "-Xcc", "-module-cache-path", "-target", "-swift-version":
                if i + 1 < args.count { flags += [args[i], args[i + 1]] }
                i += 2
            case "-enable-upcoming-feature":
                i += 2
            default:
                i += 1
            }
        }
        let tool = URL(fileURLWithPath: args[0]).deletingLastPathComponent().appendingPathComponent("swift-symbolgraph-extract")
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("symbolgraph-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: out) }
        let process = Process()
        process.executableURL = tool
        process.arguments = ["-module-name", module, "-minimum-access-level", "public", "-skip-synthesized-members",
                             "-output-dir", out.path] + flags
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "\(tool.path) failed (\(process.terminationStatus)): \(String(decoding: message, as: UTF8.self).suffix(2000))")
        }
        let graph = try Data(contentsOf: out.appendingPathComponent("\(module).symbols.json"))
        return try lines(graph)
    }

    /// The `args` of the module's compile command in the llbuild manifest.
    static func compileArguments(module: String, manifest: String) throws -> [String] {
        let lines = manifest.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0.hasPrefix("  \"C.\(module)-") && $0.hasSuffix("-debug.module\":") }),
              let argsLine = lines[start...].prefix(8).first(where: { $0.hasPrefix("    args: [") }) else {
            throw Failure(description: "no compile command for \(module) in debug.yaml")
        }
        let json = argsLine.dropFirst("    args: ".count)
        guard let args = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String], !args.isEmpty else {
            throw Failure(description: "cannot read the compile arguments of \(module)")
        }
        return args
    }

    /// `kind path: declaration`, sorted; then `conformance Type: Protocol`.
    static func lines(_ graph: Data) throws -> [String] {
        guard let root = try JSONSerialization.jsonObject(with: graph) as? [String: Any],
              let symbols = root["symbols"] as? [[String: Any]] else {
            throw Failure(description: "the symbol graph has no symbols")
        }
        var paths: [String: String] = [:]
        var out: [String] = []
        for symbol in symbols {
            guard let identifier = symbol["identifier"] as? [String: Any], let usr = identifier["precise"] as? String,
                  let kind = (symbol["kind"] as? [String: Any])?["identifier"] as? String,
                  let path = symbol["pathComponents"] as? [String] else { continue }
            let fragments = (symbol["declarationFragments"] as? [[String: Any]]) ?? []
            let declaration = fragments.compactMap { $0["spelling"] as? String }.joined()
                .split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
            let name = path.joined(separator: ".")
            paths[usr] = name
            out.append("\(kind.replacingOccurrences(of: "swift.", with: "")) \(name): \(declaration)")
        }
        for relation in (root["relationships"] as? [[String: Any]]) ?? [] {
            guard relation["kind"] as? String == "conformsTo", let source = relation["source"] as? String,
                  let type = paths[source] else { continue }
            let target = (relation["target"] as? String).flatMap { paths[$0] } ?? (relation["targetFallback"] as? String) ?? "?"
            out.append("conformance \(type): \(target)")
        }
        return Array(Set(out)).sorted()
    }
}
