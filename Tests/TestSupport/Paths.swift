import Foundation

/// Where things are, for tests: the repository root (from this file's path) and the built
/// `analog-remote` binary (beside the test bundle in the build folder).
public enum Paths {
    public static let repositoryRoot: URL = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }()

    /// `<build>/debug/analog-remote` (or release): the directory that holds the test bundle; or
    /// `$ANALOG_REMOTE_BINARY`, to run the end-to-end tests against another build (an older one,
    /// to show a test fails there).
    public static let analogRemote: URL = {
        if let path = ProcessInfo.processInfo.environment["ANALOG_REMOTE_BINARY"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("analog-remote")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("analog-remote")
    }()

    public static func repositoryFile(_ relative: String) -> URL {
        repositoryRoot.appendingPathComponent(relative)
    }
}
