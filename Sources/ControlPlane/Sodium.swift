import CSodium

/// libsodium, made ready once: `sodium_init` picks the fastest implementation for this CPU and
/// must run before the first call of any primitive (running it again is harmless).
enum Sodium {
    static let ready: Bool = sodium_init() >= 0

    /// Stops the program when libsodium cannot start (it cannot on a CPU it does not know, and
    /// nothing may be signed or sealed then).
    static func require() {
        precondition(ready, "libsodium failed to initialise")
    }

    /// libsodium's pointers are declared non-null even for zero bytes, and an empty array may
    /// have no storage: an empty input is passed as a pointer to one unused byte and count 0.
    static func withBytes<R>(_ bytes: [UInt8], _ body: (UnsafePointer<UInt8>, Int) -> R) -> R {
        if bytes.isEmpty {
            var none: UInt8 = 0
            return withUnsafePointer(to: &none) { body($0, 0) }
        }
        return bytes.withUnsafeBufferPointer { body($0.baseAddress!, $0.count) }
    }
}
