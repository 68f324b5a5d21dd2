// The envelope's cipher before and after it moved to libsodium, in one process: the hand-written
// one (old.swift: `git show ed77887:Sources/ControlPlane/ChaCha20Poly1305.swift > old.swift`)
// and libsodium's, each sealing and opening an 8-byte state under a 36-byte AAD, in place,
// timed in thread CPU time (the machines are shared: wall time measures the neighbours).
//
//   swiftc -O -I Sources/CSodium -lsodium old.swift benchmarks/aead-micro/main.swift -o aead-micro
import CSodium
import Glibc

func now() -> UInt64 { var t = timespec(); clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec) }

let n = 2_000_000

func runOld() -> Double {
    let keyBytes: [UInt8] = Array(0..<32)
    let aad = [UInt8](repeating: 0x41, count: 36)
    var buf = [UInt8](repeating: 0, count: 8 + 16)
    let c = ChaCha20Poly1305(key: keyBytes)
    var sum: UInt64 = 0
    let t0 = now()
    for i in 0..<n {
        let nonce = ChaCha20Poly1305.Nonce(counter: UInt64(i + 1))
        aad.withUnsafeBytes { a in
            buf.withUnsafeMutableBytes { b in
                b[0] = UInt8(truncatingIfNeeded: i)
                let text = UnsafeMutableRawBufferPointer(rebasing: b[0..<8]), tag = UnsafeMutableRawBufferPointer(rebasing: b[8...])
                c.seal(nonce: nonce, aad: a, plaintext: UnsafeRawBufferPointer(text), ciphertext: text, tag: tag)
                if c.open(nonce: nonce, aad: a, ciphertext: UnsafeRawBufferPointer(text), tag: UnsafeRawBufferPointer(tag), into: text) { sum &+= UInt64(b[0]) }
            }
        }
    }
    let t1 = now()
    precondition(sum > 0)
    return Double(t1 - t0) / Double(n)
}

func runSodium() -> Double {
    let keyBytes: [UInt8] = Array(0..<32)
    let aad = [UInt8](repeating: 0x41, count: 36)
    var buf = [UInt8](repeating: 0, count: 8 + 16)
    precondition(sodium_init() >= 0)
    let key = keyBytes
    var sum: UInt64 = 0
    let t0 = now()
    for i in 0..<n {
        var nonce: (UInt32, UInt32, UInt32) = (0, UInt32(truncatingIfNeeded: UInt64(i + 1) >> 32).bigEndian, UInt32(truncatingIfNeeded: i + 1).bigEndian)
        aad.withUnsafeBytes { a in
            buf.withUnsafeMutableBufferPointer { b in
                key.withUnsafeBufferPointer { k in
                    withUnsafeBytes(of: &nonce) { np in
                        let p = b.baseAddress!, npub = np.baseAddress!.assumingMemoryBound(to: UInt8.self)
                        p[0] = UInt8(truncatingIfNeeded: i)
                        _ = crypto_aead_chacha20poly1305_ietf_encrypt_detached(p, p + 8, nil, p, 8, a.baseAddress!.assumingMemoryBound(to: UInt8.self), 36, nil, npub, k.baseAddress!)
                        if crypto_aead_chacha20poly1305_ietf_decrypt_detached(p, nil, p, 8, p + 8, a.baseAddress!.assumingMemoryBound(to: UInt8.self), 36, npub, k.baseAddress!) == 0 { sum &+= UInt64(p[0]) }
                    }
                }
            }
        }
    }
    let t1 = now()
    precondition(sum > 0)
    return Double(t1 - t0) / Double(n)
}

for round in 1...3 {
    let o = runOld(), s = runSodium()
    print("round \(round): hand-written \(Int(o)) ns, libsodium \(Int(s)) ns per seal + open (8-byte state, 36-byte AAD), thread CPU time")
}
