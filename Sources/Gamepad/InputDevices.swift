#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Why SDL may see no pad although one is plugged in: SDL silently skips input devices it
/// cannot open, so a pad on a machine where the user is not in the `input` group (and has no
/// seat ACL) is simply absent from the list.
package enum InputDevices {
    /// The `event*`/`js*` nodes under `directory` this process cannot read (sorted).
    package static func unreadable(in directory: String = "/dev/input") -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasPrefix("event") || $0.hasPrefix("js") }
            .map { directory + "/" + $0 }
            .filter { access($0, R_OK) != 0 }
            .sorted()
    }
}
