#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SerialTTY
import SystemIO
import TestSupport
import Testing

@Suite struct SerialTTYTests {
    /// Raw mode on both sides: every byte value crosses unchanged (no CR/LF translation, no
    /// echo, no signals from ^C, no XON/XOFF), both ways.
    @Test func aPseudoTerminalInRawModePassesEveryByteUnchanged() throws {
        let pty = try PseudoTerminal()
        let port = try SerialPort.open(path: pty.slavePath, baud: 9600)
        let all = (0...255).map { UInt8($0) }
        try port.writeAll(all)
        #expect(try readExactly(pty.master, all.count) == all)
        try pty.master.writeAll(all.reversed())
        #expect(try readExactly(port, all.count) == all.reversed())
        #expect(try port.read() == nil, "nothing echoed back, and an empty tty reads as would-block, not end of file")
        #expect(try pty.master.read() == nil)
    }

    @Test func aClosedMasterIsEndOfFileOrAnErrorForTheSlave() throws {
        let pty = try PseudoTerminal()
        let port = try SerialPort.open(path: pty.slavePath, baud: 115200)
        pty.close()
        let ready = try Poller.wait(for: port.rawValue, events: .readable, timeout: .seconds(2))
        #expect(ready.contains(.hangUp) || ready.contains(.readable))
        do {
            let got = try port.read()
            #expect(got == [], "end of file")
        } catch {
            #expect(error.errno == EIO)
        }
    }

    @Test func unsupportedBaudAndMissingDevicesAreExplained() {
        do {
            _ = try SerialPort.open(path: "/dev/null", baud: 1234)
            Issue.record("opened with a bad baud")
        } catch {
            #expect(OpenFailure.serialAdvice(error, baud: 1234).hasPrefix("unsupported baud rate 1234 (use one of 1200, 2400"))
        }
        do {
            _ = try SerialPort.open(path: "/dev/null", baud: 9600)
            Issue.record("/dev/null is not a tty")
        } catch {
            #expect(OpenFailure.serialAdvice(error, baud: 9600) == "not a terminal device (a serial board is a tty such as /dev/ttyACM0)")
        }
    }

    /// The listing reads ids from a sysfs-shaped tree: ttyACM one level below the USB device,
    /// ttyUSB two, unknown ones without ids; other ttys are not candidates.
    @Test func serialDevicesGetTheirUSBIdsFromSysfs() throws {
        let dir = try TemporaryDirectory()
        let fm = FileManager.default
        let dev = dir.path + "/dev", sys = dir.path + "/sys"
        for name in ["ttyACM0", "ttyUSB1", "ttyACM10", "ttyS0", "tty"] {
            try fm.createDirectory(atPath: dev, withIntermediateDirectories: true)
            #expect(fm.createFile(atPath: "\(dev)/\(name)", contents: nil))
        }
        let leonardo = sys + "/devices/usb1/1-1"
        try fm.createDirectory(atPath: leonardo + "/1-1:1.0", withIntermediateDirectories: true)
        for (file, text) in [("idVendor", "2341\n"), ("idProduct", "8036\n"), ("manufacturer", "Arduino LLC\n"), ("product", "Arduino Leonardo\n")] {
            try text.write(toFile: "\(leonardo)/\(file)", atomically: true, encoding: .utf8)
        }
        let bridge = sys + "/devices/usb1/1-2"
        try fm.createDirectory(atPath: bridge + "/1-2:1.0/ttyUSB1", withIntermediateDirectories: true)
        try "0403\n".write(toFile: bridge + "/idVendor", atomically: true, encoding: .utf8)
        try "6001\n".write(toFile: bridge + "/idProduct", atomically: true, encoding: .utf8)
        for (tty, target) in [("ttyACM0", leonardo + "/1-1:1.0"), ("ttyUSB1", bridge + "/1-2:1.0/ttyUSB1")] {
            try fm.createDirectory(atPath: "\(sys)/class/tty/\(tty)", withIntermediateDirectories: true)
            try fm.createSymbolicLink(atPath: "\(sys)/class/tty/\(tty)/device", withDestinationPath: target)
        }
        let found = SerialDevices.list(devDirectory: dev, sysClass: sys + "/class/tty")
        #expect(found == [
            SerialDevice(path: dev + "/ttyACM0", usbID: "2341:8036", product: "Arduino LLC Arduino Leonardo"),
            SerialDevice(path: dev + "/ttyUSB1", usbID: "0403:6001", product: nil),
            SerialDevice(path: dev + "/ttyACM10", usbID: nil, product: nil),
        ])
    }
}

func readExactly(_ d: Descriptor, _ n: Int) throws -> [UInt8] {
    var out: [UInt8] = []
    let deadline = ContinuousClock.now + .seconds(5)
    while out.count < n && ContinuousClock.now < deadline {
        _ = try Poller.wait(for: d.rawValue, events: .readable, timeout: .milliseconds(100))
        if let b = try d.read(max: n - out.count) { out += b }
    }
    return out
}
