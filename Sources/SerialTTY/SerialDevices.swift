#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A serial device that may be a board: `/dev/ttyACM*` (USB CDC, the kit's Leonardo/Pro Micro)
/// and `/dev/ttyUSB*` (USB-UART bridges), with what sysfs knows of its USB device.
package struct SerialDevice: Hashable, Sendable {
    package let path: String
    /// `2341:8036` when known.
    package let usbID: String?
    /// `Arduino LLC Arduino Leonardo` when known.
    package let product: String?

    package init(path: String, usbID: String?, product: String?) {
        self.path = path
        self.usbID = usbID
        self.product = product
    }
}

package enum SerialDevices {
    /// The candidates, sorted by path; empty when there are none.
    package static func list(devDirectory: String = "/dev", sysClass: String = "/sys/class/tty") -> [SerialDevice] {
        guard let dir = opendir(devDirectory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasPrefix("ttyACM") || name.hasPrefix("ttyUSB") { names.append(name) }
        }
        return names.sorted { a, b in
            (a.count, a) < (b.count, b)
        }.map { name in
            let usb = usbDirectory(of: "\(sysClass)/\(name)/device")
            let vendor = usb.flatMap { readLine("\($0)/idVendor") }
            let product = usb.flatMap { readLine("\($0)/idProduct") }
            let words = [usb.flatMap { readLine("\($0)/manufacturer") }, usb.flatMap { readLine("\($0)/product") }]
                .compactMap { $0 }.filter { !$0.isEmpty }
            return SerialDevice(path: "\(devDirectory)/\(name)",
                                usbID: vendor.flatMap { v in product.map { "\(v):\($0)" } },
                                product: words.isEmpty ? nil : words.joined(separator: " "))
        }
    }

    /// The USB device directory above a tty's `device` link: the first ancestor holding `idVendor`
    /// (one level up for ttyACM's interface, two for ttyUSB's port).
    static func usbDirectory(of deviceLink: String) -> String? {
        guard let resolved = realpath(deviceLink, nil) else { return nil }
        defer { free(resolved) }
        var path = String(cString: resolved)
        for _ in 0..<4 {
            if access(path + "/idVendor", R_OK) == 0 { return path }
            guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return nil }
            path = String(path[..<slash])
        }
        return nil
    }

    /// The first line of a small sysfs file, trimmed.
    static func readLine(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 256)
        let n = read(fd, &buffer, buffer.count)
        guard n > 0 else { return nil }
        let text = String(decoding: buffer.prefix(n), as: UTF8.self)
        return text.split(separator: "\n").first.map { $0.trimmingCharacters() }
    }
}

extension Substring {
    func trimmingCharacters() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
