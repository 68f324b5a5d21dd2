#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization
import SystemIO

/// The last-resort way out: when the process dies of a fatal signal (SIGSEGV, SIGBUS, SIGABRT,
/// SIGILL, SIGFPE, SIGTRAP, SIGQUIT), put the terminal back and send the neutral state three
/// times, then let the signal do what it did before (the Swift runtime's backtrace, or a core
/// dump). SIGINT/SIGTERM/SIGHUP are not handled here: the send loop takes them through
/// `SignalWatcher` and leaves the normal way.
///
/// The handler may only make async-signal-safe calls (`write`, `tcsetattr`, `sendto`,
/// `sigaction`, `raise`) and touch memory prepared in advance. So the terminal settings and the
/// peer address live in a block allocated once, published by an atomic descriptor number that is
/// -1 while the block is being written: the handler, which can run on any thread, then skips that
/// part rather than read half an address.
enum FatalSignalGuard {
    static var signals: [Int32] { FatalSignals.signals }

    /// Installs the handlers once per process; later calls do nothing.
    static func install() {
        guard !installed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        // Touch the lazily initialised globals now: their first access is not signal-safe.
        _ = storage
        _ = previousActions
        _ = terminalFD.load(ordering: .relaxed)
        _ = socketFD.load(ordering: .relaxed)
        FatalSignals.install(fatalSignalHandler, previous: previousActions)
    }

    /// From now on a fatal signal restores `fd` to `settings` and resets the terminal with
    /// ``TerminalMode/resetSequence``.
    static func armTerminal(fd: Int32, settings: termios) {
        terminalFD.store(-1, ordering: .releasing)
        storage.pointee.terminal = settings
        terminalFD.store(fd, ordering: .releasing)
    }

    static func disarmTerminal() { terminalFD.store(-1, ordering: .releasing) }

    /// From now on a fatal signal sends 8 zero bytes (the neutral state) three times from the
    /// UDP socket `fd` to `peer`.
    static func armNeutral(socket fd: Int32, peer: SocketAddress) {
        socketFD.store(-1, ordering: .releasing)
        peer.withSockAddr { sa, length in
            withUnsafeMutableBytes(of: &storage.pointee.address) { raw in
                raw.copyMemory(from: UnsafeRawBufferPointer(start: sa, count: min(Int(length), raw.count)))
            }
            storage.pointee.addressLength = length
        }
        socketFD.store(fd, ordering: .releasing)
    }

    static func disarmNeutral() { socketFD.store(-1, ordering: .releasing) }
}

/// What the handler needs, prepared before it can run.
struct FatalCleanup {
    var terminal = termios()
    var address = sockaddr_storage()
    var addressLength: socklen_t = 0
}

private let installed = Atomic<Bool>(false)
private let terminalFD = Atomic<Int32>(-1)
private let socketFD = Atomic<Int32>(-1)
/// Write-once pointers to blocks the handler reads; the blocks themselves are guarded by the
/// atomics above (see ``FatalSignalGuard``).
private nonisolated(unsafe) let storage: UnsafeMutablePointer<FatalCleanup> = {
    let p = UnsafeMutablePointer<FatalCleanup>.allocate(capacity: 1)
    p.initialize(to: FatalCleanup())
    return p
}()
private nonisolated(unsafe) let previousActions = FatalSignals.allocatePrevious()

private func fatalSignalHandler(_ sig: Int32) {
    let tty = terminalFD.exchange(-1, ordering: .acquiringAndReleasing)
    if tty >= 0 {
        TerminalMode.resetSequence.withUTF8Buffer { _ = write(tty, $0.baseAddress, $0.count) }
        _ = tcsetattr(tty, TCSANOW, &storage.pointee.terminal)
    }
    let udp = socketFD.exchange(-1, ordering: .acquiringAndReleasing)
    if udp >= 0 {
        var neutral: UInt64 = 0
        withUnsafeBytes(of: &neutral) { packet in
            withUnsafeBytes(of: &storage.pointee.address) { raw in
                let sa = raw.baseAddress!.assumingMemoryBound(to: sockaddr.self)
                for _ in 0..<3 {
                    _ = sendto(udp, packet.baseAddress, 8, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL), sa, storage.pointee.addressLength)
                }
            }
        }
    }
    FatalSignals.chain(sig, previous: previousActions)
}
