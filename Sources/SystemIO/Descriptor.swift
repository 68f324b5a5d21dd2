#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// A file descriptor with exactly one owner, closed exactly once: by ``close()`` or on deinit.
///
/// Trap: after ``close()`` the number may be reused by the kernel for another file; anything
/// that copied ``rawValue`` must not use it any more. Readers use ``rawValue`` only while they
/// hold this object.
package final class Descriptor: Sendable {
    private let fd: Atomic<Int32>
    /// What this descriptor is (a path, `udp [::]:5000`), for error messages.
    package let label: String

    package init(adopting fd: Int32, label: String) {
        self.fd = Atomic(fd)
        self.label = label
    }

    deinit { close() }

    /// The number, or -1 once closed.
    package var rawValue: Int32 { fd.load(ordering: .acquiring) }
    package var isOpen: Bool { rawValue >= 0 }

    /// Closes the descriptor if it is still open. Safe to call twice.
    package func close() {
        let old = fd.exchange(-1, ordering: .acquiringAndReleasing)
        if old >= 0 { _ = Glibc.close(old) }
    }

    package func setNonBlocking(_ on: Bool = true) throws(SystemError) {
        let raw = rawValue
        let flags = try Syscall.call("fcntl(F_GETFL)", subject: label) { fcntl(raw, F_GETFL) }
        let wanted = on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
        if wanted != flags {
            try Syscall.call("fcntl(F_SETFL)", subject: label) { fcntl(raw, F_SETFL, wanted) }
        }
    }

    /// Writes all of `bytes`, waiting (with poll) while a non-blocking descriptor is full.
    package func writeAll(_ bytes: some Collection<UInt8>) throws(SystemError) {
        let buffer = Array(bytes)
        var offset = 0
        let raw = rawValue
        while offset < buffer.count {
            let n = try Syscall.nonBlocking("write", subject: label) {
                buffer.withUnsafeBytes { p in Glibc.write(raw, p.baseAddress! + offset, p.count - offset) }
            }
            if let n { offset += n } else { _ = try Poller.wait(for: raw, events: .writable, timeout: .milliseconds(100)) }
        }
    }

    /// Reads what is there into `buffer` (at most its count), for hot loops that keep one buffer.
    /// 0 = end of file; nil = would block.
    package func read(into buffer: inout [UInt8]) throws(SystemError) -> Int? {
        let raw = rawValue
        let result = buffer.withUnsafeMutableBytes { p in Result { () throws(SystemError) in try Syscall.read(raw, into: p, subject: label) } }
        return try result.get()
    }

    /// Reads what is there (at most `max` bytes). Empty array = end of file; nil = would block.
    package func read(max: Int = 4096) throws(SystemError) -> [UInt8]? {
        try Syscall.read(rawValue, max: max, subject: label)
    }
}
