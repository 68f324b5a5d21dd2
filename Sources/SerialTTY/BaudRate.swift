#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The baud rates termios can set (`B9600` …). USB CDC boards (ttyACM) ignore the number; a
/// UART bridge (ttyUSB) and the simulated board's wire model do not.
package enum BaudRate {
    package static let standard: [(Int, speed_t)] = [
        (1200, speed_t(B1200)), (2400, speed_t(B2400)), (4800, speed_t(B4800)), (9600, speed_t(B9600)),
        (19200, speed_t(B19200)), (38400, speed_t(B38400)), (57600, speed_t(B57600)), (115200, speed_t(B115200)),
        (230400, speed_t(B230400)), (460800, speed_t(B460800)), (500000, speed_t(B500000)),
        (576000, speed_t(B576000)), (921600, speed_t(B921600)), (1_000_000, speed_t(B1000000)),
        (2_000_000, speed_t(B2000000)),
    ]

    package static let `default` = 115200

    /// The termios constant for `baud`, or nil if termios has none.
    package static func speed(_ baud: Int) -> speed_t? {
        standard.first { $0.0 == baud }?.1
    }

    /// `1200, 2400, … 2000000`, for error messages.
    package static var allowedList: String {
        standard.map { String($0.0) }.joined(separator: ", ")
    }
}
