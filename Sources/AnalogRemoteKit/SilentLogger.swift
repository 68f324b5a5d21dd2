import Logging

extension Logger {
    /// A logger that drops everything: the library's default, so a program that passes none sees
    /// no output from it (whatever its own `LoggingSystem` bootstrap says).
    static func silent(_ label: String) -> Logger {
        Logger(label: label, factory: { _ in SwiftLogNoOpLogHandler() })
    }
}
