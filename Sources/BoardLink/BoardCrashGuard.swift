#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import BoardProtocol
import MIDIFraming
import Synchronization
import SystemIO

/// The last way out for a process driving a board: when it dies of a fatal signal (a Swift
/// trap is SIGTRAP or SIGILL, then SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGQUIT), write the safe
/// state straight to the board's tty from the signal handler, then let the signal do what it
/// did before (the Swift runtime's backtrace, or a core dump). Without it a receiver that traps
/// leaves the motors running until someone pulls the cable.
///
/// The bytes are prepared when the tty opens: for text framing a bare LF first (it ends any
/// command cut off mid-line; the firmware runs or refuses that fragment, then reads ours), then
/// one `W` per contiguous run of the safe state; for MIDI framing an F7 first (ends a cut-off
/// SysEx) and each line in its own SysEx. The handler only calls `write(2)`, `sigaction` and
/// `raise`, and reads memory published through an atomic descriptor number (-1 while being
/// written). ALSA rawmidi has no plain descriptor to write to and is not covered.
/// SIGINT/SIGTERM are not handled here: the receiver takes them through its loop.
enum BoardCrashGuard {
    static let capacity = 512

    /// The bytes that stop the board described by `profile`, for `framing`.
    static func stopBytes(profile: MemoryMapProfile, midi: Bool) -> [UInt8] {
        stopBytes(safeState: profile.safeState(onMapOf: profile.size), midi: midi)
    }

    /// The bytes that write `safeState`, for `framing`.
    static func stopBytes(safeState: [UInt8: UInt8], midi: Bool) -> [UInt8] {
        var out: [UInt8] = midi ? [SysEx.end] : [UInt8(ascii: "\n")]
        let addresses = safeState.keys.sorted()
        var i = 0
        while i < addresses.count {
            var run = [addresses[i]]
            while i + 1 < addresses.count, addresses[i + 1] == run[run.count - 1] &+ 1 {
                i += 1
                run.append(addresses[i])
            }
            i += 1
            let line = BoardCommand.write(address: run[0], bytes: run.map { safeState[$0] ?? 0 }).line
            out += midi ? ((try? SysEx.frame(line)) ?? []) : line
        }
        return out
    }

    /// From now on a fatal signal writes `bytes` to `fd` (once). Installs the handlers on first use.
    static func arm(fd: Int32, bytes: [UInt8]) {
        install()
        armedFD.store(-1, ordering: .releasing)
        let count = min(bytes.count, capacity)
        for i in 0..<count { stopBuffer[i] = bytes[i] }
        stopLength.store(count, ordering: .releasing)
        armedFD.store(fd, ordering: .releasing)
    }

    /// Disarms if `fd` is the armed descriptor (a closed descriptor's number may be reused).
    static func disarm(fd: Int32) {
        _ = armedFD.compareExchange(expected: fd, desired: -1, ordering: .acquiringAndReleasing)
    }

    static func install() {
        guard !installed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        _ = stopBuffer
        FatalSignals.install(boardCrashHandler, previous: previousActions)
    }
}

private let installed = Atomic<Bool>(false)
private let armedFD = Atomic<Int32>(-1)
private let stopLength = Atomic<Int>(0)
/// Write-once allocations the handler reads; their content is published by `armedFD`.
private nonisolated(unsafe) let stopBuffer: UnsafeMutablePointer<UInt8> = {
    let p = UnsafeMutablePointer<UInt8>.allocate(capacity: BoardCrashGuard.capacity)
    p.initialize(repeating: 0, count: BoardCrashGuard.capacity)
    return p
}()
private nonisolated(unsafe) let previousActions = FatalSignals.allocatePrevious()

private func boardCrashHandler(_ sig: Int32) {
    let fd = armedFD.exchange(-1, ordering: .acquiringAndReleasing)
    if fd >= 0 {
        let length = stopLength.load(ordering: .acquiring)
        var offset = 0
        // The tty is non-blocking: a full output buffer ends the attempt rather than hang a
        // dying process. The board's own buffer is far larger than these few lines.
        while offset < length {
            let n = write(fd, stopBuffer + offset, length - offset)
            if n <= 0 { break }
            offset += n
        }
    }
    FatalSignals.chain(sig, previous: previousActions)
}
