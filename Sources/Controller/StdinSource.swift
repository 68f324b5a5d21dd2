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
package final class StdinSource: InputSource {
    package let name: String
    private let fd: Int32
    private var splitter = LineSplitter()
    private var ended = false
    /// One read's bytes, allocated once (a line per read is the usual case at 50–1000 Hz).
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)

    /// Reads `fd` (not owned: it is not closed). `name` prefixes messages: `stdin:3: …`.
    package init(fd: Int32 = STDIN_FILENO, name: String = "stdin") {
        self.fd = fd
        self.name = name
    }

    deinit { buffer.deallocate() }

    package var descriptor: Int32? { ended ? nil : fd }

    package func read(now: ContinuousClock.Instant) -> [InputEvent] {
        guard !ended else { return [] }
        let count: Int?
        do {
            count = try Syscall.read(fd, into: buffer, subject: name)
        } catch {
            ended = true
            return [.end(.deviceLost("\(name): \(error.reason)"))]
        }
        guard let count else { return [] }
        if count == 0 {
            splitter.finish()
        } else {
            splitter.feed(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        }
        var events = lines()
        if count == 0 {
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
