#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemIO

/// States from a byte stream, one ``StateLine`` per line (`ANGLE BUTTONS`); normally stdin.
///
/// A bad line becomes one `.notice` (`stdin:LINE: what is wrong`) and is skipped; the stream goes
/// on. End of file ends the controller (`.end(.endOfInput)`); a read error is a lost device.
///
/// Trap: the descriptor is left blocking. O_NONBLOCK would be set on the open file description
/// that the shell shares, and a shell whose stdin turned non-blocking misbehaves after we exit.
/// Poll says readable first, so one `read(2)` does not block.
public final class StdinSource: InputSource {
    public let name: String
    private let fd: Int32
    private var splitter = LineSplitter()
    private var ended = false

    /// Reads `fd` (not owned: it is not closed). `name` prefixes messages: `stdin:3: …`.
    public init(fd: Int32 = STDIN_FILENO, name: String = "stdin") {
        self.fd = fd
        self.name = name
    }

    public var descriptor: Int32? { ended ? nil : fd }

    public func read(now: ContinuousClock.Instant) -> [InputEvent] {
        guard !ended else { return [] }
        let bytes: [UInt8]?
        do {
            bytes = try Syscall.read(fd, max: 4096, subject: name)
        } catch {
            ended = true
            return [.end(.deviceLost("\(name): \(error.reason)"))]
        }
        guard let bytes else { return [] }
        if bytes.isEmpty {
            splitter.finish()
        } else {
            splitter.feed(bytes[...])
        }
        var events = lines()
        if bytes.isEmpty {
            ended = true
            events.append(.end(.endOfInput))
        }
        return events
    }

    /// Parses the complete lines received so far.
    func lines() -> [InputEvent] {
        var events: [InputEvent] = []
        while let line = splitter.next() {
            switch line {
            case .tooLong(let number):
                events.append(.notice("\(name):\(number): longer than \(splitter.maximumLength) bytes, skipped"))
            case .text(let number, let text):
                do {
                    if let state = try StateLine.parse(text) { events.append(.state(state)) }
                } catch {
                    events.append(.notice("\(name):\(number): \(error.description), line skipped"))
                }
            }
        }
        return events
    }
}
