#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemIO

/// Opens serial devices the way the kit needs them.
package enum SerialPort {
    /// Opens `path` non-blocking and configures it: raw mode (`cfmakeraw`: no echo, no line
    /// editing, no CR/LF translation), 8 data bits, no parity, 1 stop bit, no flow control,
    /// receiver on, modem lines ignored, `baud`; DTR and RTS asserted (the kit's USB serial only
    /// sends once DTR is set); pending input and output flushed.
    ///
    /// `exclusive`: for a process that drives the board. Before anything touches the device,
    /// an exclusive `flock` is taken without waiting (held until the descriptor closes, also
    /// when the process dies); a device another driver holds throws `flock` / `EWOULDBLOCK` (`EAGAIN`)
    /// and is left as it was: its output queue is not flushed, its settings not changed. Tools
    /// that only look (a probe) pass false. The lock is advisory: it keeps our own drivers
    /// apart, not a serial monitor.
    ///
    /// Errors are ``SystemError``s naming the call; see ``OpenFailure`` for a message a person can act on.
    package static func open(path: String, baud: Int, exclusive: Bool = false) throws(SystemError) -> Descriptor {
        guard let speed = BaudRate.speed(baud) else {
            throw SystemError(call: "cfsetspeed", errno: EINVAL, subject: path)
        }
        let fd = try Syscall.call("open", subject: path) {
            Glibc.open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        }
        let descriptor = Descriptor(adopting: fd, label: path)
        if exclusive {
            try Syscall.call("flock", subject: path) { flock(fd, LOCK_EX | LOCK_NB) }
        }
        try makeRaw(descriptor, speed: speed)
        assertModemLines(descriptor)
        try Syscall.call("tcflush", subject: path) { tcflush(fd, TCIOFLUSH) }
        return descriptor
    }

    /// Raw 8N1 at `speed` (nil: leave the speed alone). Works on pseudo-terminals too.
    package static func makeRaw(_ descriptor: Descriptor, speed: speed_t?) throws(SystemError) {
        let fd = descriptor.rawValue
        var t = termios()
        try Syscall.call("tcgetattr", subject: descriptor.label) { tcgetattr(fd, &t) }
        cfmakeraw(&t)
        t.c_cflag |= tcflag_t(CLOCAL) | tcflag_t(CREAD) | tcflag_t(CS8)
        t.c_cflag &= ~(tcflag_t(CSTOPB) | tcflag_t(PARENB) | tcflag_t(CRTSCTS))
        t.c_iflag &= ~(tcflag_t(IXON) | tcflag_t(IXOFF) | tcflag_t(IXANY))
        // VMIN = 1, VTIME = 0. Trap: with VMIN = 0 a non-blocking read of an empty tty returns 0,
        // not EAGAIN, and 0 is how a hung-up tty (an unplugged board) says end of file.
        withUnsafeMutableBytes(of: &t.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        if let speed {
            try Syscall.call("cfsetispeed", subject: descriptor.label) { cfsetispeed(&t, speed) }
            try Syscall.call("cfsetospeed", subject: descriptor.label) { cfsetospeed(&t, speed) }
        }
        try Syscall.call("tcsetattr", subject: descriptor.label) { tcsetattr(fd, TCSANOW, &t) }
    }

    /// Sets DTR and RTS (`TIOCMBIS`). Returns false where the device has no modem lines (a
    /// pseudo-terminal answers ENOTTY/EINVAL): that is not an error.
    @discardableResult
    package static func assertModemLines(_ descriptor: Descriptor) -> Bool {
        var bits = Int32(TIOCM_DTR | TIOCM_RTS)
        return ioctl(descriptor.rawValue, UInt(TIOCMBIS), &bits) == 0
    }
}

/// A failure to open a board's device, worded for the person at the terminal: what went wrong
/// and what to do about it.
package enum OpenFailure {
    /// `permission denied (add your user to the dialout group, then log in again)` and the like.
    package static func serialAdvice(_ error: SystemError, baud: Int) -> String {
        switch error.errno {
        case ENOENT, ENODEV, ENXIO:
            return "no such device (is the board plugged in? `analog-remote boards` lists candidates)"
        case EACCES, EPERM:
            return "permission denied (add your user to the dialout group, then log in again)"
        case EBUSY:
            return "device busy (another program has it open: close the serial monitor or ModemManager)"
        case EAGAIN where error.call == "flock":
            return "in use by another analog-remote process driving this board (a running receiver: it leaves the board "
                + "at rest itself when it stops, e.g. `systemctl stop analog-remote`); nothing was written"
        case ENOTTY:
            return "not a terminal device (a serial board is a tty such as /dev/ttyACM0)"
        case EINVAL where error.call == "cfsetspeed":
            return "unsupported baud rate \(baud) (use one of \(BaudRate.allowedList))"
        case EIO:
            return "input/output error (the board was unplugged or reset; plug it in again)"
        default:
            return "\(error.call): \(error.reason)"
        }
    }
}
