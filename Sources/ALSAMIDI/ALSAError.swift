#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CALSA

/// A failed ALSA call: the call, the device, and the negative errno ALSA returned.
package struct ALSAError: Error, Hashable, Sendable, CustomStringConvertible {
    package enum Kind: Hashable, Sendable {
        /// This machine has no sound devices at all (no /dev/snd): no driver, or a container.
        case noSoundDevices
        /// An ALSA call returned the negative errno `code`.
        case failed(call: String, code: Int32)
    }

    package let kind: Kind
    /// The device name (`hw:1,0,0`).
    package let device: String

    package init(_ kind: Kind, device: String) {
        self.kind = kind
        self.device = device
    }

    /// The positive errno, if any.
    package var errno: Int32? {
        if case .failed(_, let code) = kind { return -code }
        return nil
    }

    /// `snd_strerror` text, lowercased.
    package var reason: String {
        switch kind {
        case .noSoundDevices: return "no ALSA sound devices on this machine (/dev/snd is missing)"
        case .failed(_, let code):
            guard let text = snd_strerror(code) else { return "error \(code)" }
            let s = String(cString: text)
            return s.prefix(1).lowercased() + s.dropFirst()
        }
    }

    package var description: String {
        switch kind {
        case .noSoundDevices: return "\(device): \(reason)"
        case .failed(let call, _): return "\(device): \(call): \(reason)"
        }
    }
}

enum ALSA {
    /// Runs an ALSA call that returns a negative errno on failure.
    @discardableResult
    static func check<T: BinaryInteger>(_ call: String, device: String, _ body: () -> T) throws(ALSAError) -> T {
        let rc = body()
        if rc < 0 { throw ALSAError(.failed(call: call, code: Int32(truncatingIfNeeded: rc)), device: device) }
        return rc
    }

    static func string(_ p: UnsafePointer<CChar>?) -> String {
        guard let p else { return "" }
        return String(cString: p)
    }

    /// Whether the kernel exposes any sound device here. Checked before calling ALSA so that a
    /// machine without sound fails at once with a clear reason instead of ALSA's generic ENOENT.
    static var soundDevicesPresent: Bool { access("/dev/snd", F_OK) == 0 }
}
