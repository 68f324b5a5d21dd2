#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A failed system call: which call, on what, and the errno it left.
package struct SystemError: Error, Hashable, Sendable {
    package let call: String
    package let errno: Int32
    /// What the call was about (a path, an address), for the message; may be empty.
    package let subject: String

    package init(call: String, errno: Int32, subject: String = "") {
        self.call = call
        self.errno = errno
        self.subject = subject
    }

    /// `strerror` text, lowercased as in `permission denied`.
    package var reason: String {
        guard let text = strerror(errno) else { return "errno \(errno)" }
        let s = String(cString: text)
        return s.prefix(1).lowercased() + s.dropFirst()
    }
}

extension SystemError: CustomStringConvertible {
    package var description: String {
        subject.isEmpty ? "\(call): \(reason)" : "\(subject): \(call): \(reason)"
    }
}

/// The one syscall helper: runs `body`, retrying while it fails with EINTR; throws
/// ``SystemError`` for any other failure (a result of -1). Returns the non-negative result.
///
/// Non-blocking callers that expect EAGAIN use ``Syscall/nonBlocking(_:subject:_:)`` instead.
///
/// `subject` is evaluated only when the call fails: a subject such as `"udp \(peer)"` formats an
/// address, which on the controller's send path cost more than the `sendto` itself.
package enum Syscall {
    @discardableResult
    package static func call<T: FixedWidthInteger>(_ name: String, subject: @autoclosure () -> String = "",
                                                  _ body: () -> T) throws(SystemError) -> T {
        while true {
            let result = body()
            if result != -1 { return result }
            let code = errno
            if code == EINTR { continue }
            throw SystemError(call: name, errno: code, subject: subject())
        }
    }

    /// Like ``call(_:subject:_:)`` but a would-block (EAGAIN/EWOULDBLOCK) result is nil.
    package static func nonBlocking<T: FixedWidthInteger>(_ name: String, subject: @autoclosure () -> String = "",
                                                         _ body: () -> T) throws(SystemError) -> T? {
        while true {
            let result = body()
            if result != -1 { return result }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return nil }
            throw SystemError(call: name, errno: code, subject: subject())
        }
    }

    /// One `read(2)` into `buffer` (owned by the caller, reused across calls: no allocation).
    /// 0 = end of file; nil = nothing there yet (EAGAIN on a non-blocking descriptor).
    package static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, subject: String = "") throws(SystemError) -> Int? {
        try nonBlocking("read", subject: subject) { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// One `read(2)` of at most `max` bytes from `fd` (owned or not). Empty array = end of
    /// file; nil = nothing there yet (EAGAIN on a non-blocking descriptor).
    package static func read(_ fd: Int32, max: Int, subject: String = "") throws(SystemError) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: max)
        let n = try nonBlocking("read", subject: subject) {
            buffer.withUnsafeMutableBytes { p in Glibc.read(fd, p.baseAddress, p.count) }
        }
        guard let n else { return nil }
        buffer.removeSubrange(n...)
        return buffer
    }
}
