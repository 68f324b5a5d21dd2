#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemIO

/// A pseudo-terminal pair: the simulated board owns the master side, a client opens
/// ``slavePath`` like any serial device.
///
/// Traps: the slave is put in raw mode here, and ``holdSlaveOpen()`` keeps one slave descriptor
/// open, because termios settings live only while some descriptor is open, a cooked slave echoes
/// the board's own output back to it, and a master whose slave was never opened (or was closed
/// by its last client) reads EIO.
package final class PseudoTerminal: Sendable {
    package let master: Descriptor
    /// `/dev/pts/N`.
    package let slavePath: String
    private let heldSlave: Descriptor

    package init() throws(SystemError) {
        let functions = try PTYFunctions.load()
        let fd = try Syscall.call("posix_openpt") { functions.openpt(O_RDWR | O_NOCTTY | O_CLOEXEC) }
        master = Descriptor(adopting: fd, label: "pty master")
        try Syscall.call("grantpt", subject: "pty master") { functions.grantpt(fd) }
        try Syscall.call("unlockpt", subject: "pty master") { functions.unlockpt(fd) }
        var name = [CChar](repeating: 0, count: 128)
        let rc = functions.ptsnameR(fd, &name, name.count)
        guard rc == 0 else { throw SystemError(call: "ptsname_r", errno: rc, subject: "pty master") }
        let path = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        slavePath = path
        try master.setNonBlocking()
        let slave = try Syscall.call("open", subject: path) {
            Glibc.open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        }
        heldSlave = Descriptor(adopting: slave, label: path)
        try SerialPort.makeRaw(heldSlave, speed: nil)
        try SerialPort.makeRaw(master, speed: nil)
    }

    package func close() {
        heldSlave.close()
        master.close()
    }
}

/// Glibc's Swift module is built without `_XOPEN_SOURCE`, so the X/Open pty functions are not
/// imported; they are looked up in the C library at run time instead.
struct PTYFunctions {
    typealias IntFunction = @convention(c) (Int32) -> Int32
    typealias PtsnameR = @convention(c) (Int32, UnsafeMutablePointer<CChar>?, Int) -> Int32
    let openpt: IntFunction
    let grantpt: IntFunction
    let unlockpt: IntFunction
    let ptsnameR: PtsnameR

    static func load() throws(SystemError) -> PTYFunctions {
        func symbol(_ name: String) throws(SystemError) -> UnsafeMutableRawPointer {
            guard let p = dlsym(nil, name) else { throw SystemError(call: "dlsym(\(name))", errno: ENOSYS) }
            return p
        }
        return PTYFunctions(openpt: unsafeBitCast(try symbol("posix_openpt"), to: IntFunction.self),
                            grantpt: unsafeBitCast(try symbol("grantpt"), to: IntFunction.self),
                            unlockpt: unsafeBitCast(try symbol("unlockpt"), to: IntFunction.self),
                            ptsnameR: unsafeBitCast(try symbol("ptsname_r"), to: PtsnameR.self))
    }
}
