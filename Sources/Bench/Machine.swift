#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation

/// The machine a run was measured on: absolute times drift between machines (and on a shared
/// one, between runs); the ratios to the floor measured in the same run are what travels.
package struct Machine: Sendable, Codable, Hashable {
    package let cpus: Int
    package let cpuModel: String
    package let kernel: String
    package let swift: String
    /// /proc/loadavg when the run started and ended: other work on the machine skews the tails.
    package let loadAtStart: String
    package var loadAtEnd: String

    static func current() -> Machine {
        var name = utsname()
        uname(&name)
        let release = withUnsafeBytes(of: &name.release) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        let machine = withUnsafeBytes(of: &name.machine) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        let model = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("model name") }?
            .split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown"
        return Machine(cpus: sysconf(Int32(_SC_NPROCESSORS_ONLN)), cpuModel: model, kernel: "Linux \(release) \(machine)",
                       swift: compiler, loadAtStart: load(), loadAtEnd: "")
    }

    static func load() -> String {
        ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?")
            .split(separator: " ").prefix(3).joined(separator: " ")
    }

    /// The compiler that built this binary (the language has no run-time query for it).
    static var compiler: String {
        #if compiler(>=6.4)
        "Swift 6.4 or later"
        #elseif compiler(>=6.3)
        "Swift 6.3"
        #elseif compiler(>=6.2)
        "Swift 6.2"
        #else
        "Swift before 6.2"
        #endif
    }
}
