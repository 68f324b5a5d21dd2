#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Buffers to receive up to ``capacity`` datagrams with one `recvmmsg(2)`
/// (``UDPSocket/receive(into:)``): allocated once, reused for every call, so a receive allocates
/// nothing. Datagram `i < count` is ``bytes(_:)`` from ``source(_:)``; a datagram longer than a
/// slot arrives cut to ``slotSize`` bytes with its real ``length(_:)`` (`MSG_TRUNC`).
package struct DatagramBatch {
    package let capacity: Int
    package let slotSize: Int
    /// Datagrams held since the last receive.
    package private(set) var count = 0
    private var buffer: [UInt8]
    private var names: [sockaddr_storage]
    private var vectors: [iovec]
    /// Each slot's ancillary data (the arrival stamp, when the socket asked for one).
    private var controls: [UInt64]
    /// `struct mmsghdr[capacity]`, laid out by hand (Glibc's Swift module hides the GNU
    /// declarations): a `msghdr`, then the `unsigned int msg_len`, padded to 8 bytes.
    private var headers: [UInt64]

    package init(capacity: Int = 64, slotSize: Int = 2048) {
        precondition(capacity >= 1 && slotSize >= 1)
        self.capacity = capacity
        self.slotSize = slotSize
        buffer = [UInt8](repeating: 0, count: capacity * slotSize)
        names = [sockaddr_storage](repeating: sockaddr_storage(), count: capacity)
        vectors = [iovec](repeating: iovec(), count: capacity)
        controls = [UInt64](repeating: 0, count: capacity * ArrivalStamp.controlSize / 8)
        headers = [UInt64](repeating: 0, count: capacity * MultipleMessages.stride / 8)
    }

    /// The datagram's real length (may exceed the bytes kept, see ``bytes(_:)``).
    package func length(_ i: Int) -> Int {
        headers.withUnsafeBytes { Int($0.load(fromByteOffset: i * MultipleMessages.stride + MultipleMessages.lengthOffset, as: UInt32.self)) }
    }

    /// The bytes kept of datagram `i` (all of it unless it was longer than a slot); no copy.
    package func bytes(_ i: Int) -> ArraySlice<UInt8> {
        buffer[i * slotSize ..< i * slotSize + min(length(i), slotSize)]
    }

    /// How long datagram `i` waited between its arrival (the kernel's stamp, see
    /// ``UDPSocket/enableArrivalTimestamps()``) and `wall` (CLOCK_REALTIME, read just after the
    /// receive); nil when it carries no stamp. Never negative: a wall clock stepped back
    /// reads as 0.
    package func age(_ i: Int, at wall: timespec) -> Duration? {
        ageNanoseconds(i, at: wall).map { .nanoseconds($0) }
    }

    /// ``age(_:at:)`` in nanoseconds (the receive loop's ``Tick`` arithmetic: no `Duration`).
    package func ageNanoseconds(_ i: Int, at wall: timespec) -> Int64? {
        let header = headers.withUnsafeBytes { $0.load(fromByteOffset: i * MultipleMessages.stride, as: msghdr.self) }
        guard header.msg_controllen >= ArrivalStamp.headerSize + MemoryLayout<timespec>.size else { return nil }
        return controls.withUnsafeBytes { raw -> Int64? in
            let base = i * ArrivalStamp.controlSize
            // struct cmsghdr { size_t cmsg_len; int cmsg_level; int cmsg_type; }, data after it.
            let level = raw.load(fromByteOffset: base + MemoryLayout<Int>.size, as: Int32.self)
            let type = raw.load(fromByteOffset: base + MemoryLayout<Int>.size + 4, as: Int32.self)
            guard level == SOL_SOCKET, type == ArrivalStamp.option else { return nil }
            let stamp = raw.loadUnaligned(fromByteOffset: base + ArrivalStamp.headerSize, as: timespec.self)
            let ns = (Int64(wall.tv_sec) - Int64(stamp.tv_sec)) * 1_000_000_000 + Int64(wall.tv_nsec) - Int64(stamp.tv_nsec)
            return max(0, ns)
        }
    }

    package func source(_ i: Int) -> SocketAddress {
        let length = headers.withUnsafeBytes { $0.load(fromByteOffset: i * MultipleMessages.stride, as: msghdr.self).msg_namelen }
        return withUnsafeBytes(of: names[i]) { SocketAddress(raw: $0.baseAddress!, length: Int(length)) }
    }

    /// One `recvmmsg(2)`, non-blocking: the first `maximum` slots are offered; returns how many
    /// were filled (0 when nothing is waiting).
    mutating func receive(fd: Int32, maximum: Int) throws(SystemError) -> Int {
        count = 0
        let (capacity, slotSize) = (max(1, min(maximum, self.capacity)), self.slotSize)
        let result = buffer.withUnsafeMutableBytes { bytes in
            names.withUnsafeMutableBufferPointer { names in
              controls.withUnsafeMutableBytes { controls in
                vectors.withUnsafeMutableBufferPointer { vectors in
                    headers.withUnsafeMutableBytes { headers -> Result<Int32?, SystemError> in
                        for i in 0..<capacity {
                            vectors[i] = iovec(iov_base: bytes.baseAddress! + i * slotSize, iov_len: slotSize)
                            var header = msghdr()
                            header.msg_name = UnsafeMutableRawPointer(names.baseAddress! + i)
                            header.msg_namelen = socklen_t(MemoryLayout<sockaddr_storage>.size)
                            header.msg_iov = vectors.baseAddress! + i
                            header.msg_iovlen = 1
                            header.msg_control = controls.baseAddress! + i * ArrivalStamp.controlSize
                            header.msg_controllen = ArrivalStamp.controlSize
                            headers.storeBytes(of: header, toByteOffset: i * MultipleMessages.stride, as: msghdr.self)
                            headers.storeBytes(of: 0, toByteOffset: i * MultipleMessages.stride + MultipleMessages.lengthOffset, as: UInt32.self)
                        }
                        guard let call = MultipleMessages.receive else { return .failure(SystemError(call: "recvmmsg", errno: ENOSYS)) }
                        do throws(SystemError) {
                            return .success(try Syscall.nonBlocking("recvmmsg") {
                                call(fd, headers.baseAddress!, UInt32(capacity), Int32(MSG_DONTWAIT) | Int32(MSG_TRUNC), nil)
                            })
                        } catch {
                            return .failure(error)
                        }
                    }
                }
              }
            }
        }
        let n = try result.get()
        count = Int(n ?? 0)
        return count
    }
}

/// `SO_TIMESTAMPNS` and the room its control message takes.
enum ArrivalStamp {
    /// `SO_TIMESTAMPNS` (= `SCM_TIMESTAMPNS`): 35 on every Linux architecture with a 64-bit
    /// time_t in `struct timespec` (the "_OLD" value; the header's macro is not importable).
    static let option: Int32 = 35
    /// `CMSG_LEN(0)`: the aligned `struct cmsghdr`.
    static let headerSize = (MemoryLayout<Int>.size + 8 + MemoryLayout<Int>.size - 1) / MemoryLayout<Int>.size * MemoryLayout<Int>.size
    /// Room for one stamp (`CMSG_SPACE(sizeof(struct timespec))`), with spare.
    static let controlSize = 64
}

/// `recvmmsg(2)` and the layout of its `struct mmsghdr`, which Glibc's Swift module does not
/// declare (they need `_GNU_SOURCE`): the function is looked up once in the C library.
enum MultipleMessages {
    typealias Function = @convention(c) (Int32, UnsafeMutableRawPointer?, UInt32, Int32, UnsafeMutablePointer<timespec>?) -> Int32
    static let lengthOffset = MemoryLayout<msghdr>.size
    static let stride = (MemoryLayout<msghdr>.size + MemoryLayout<UInt32>.size + 7) / 8 * 8
    static let receive: Function? = dlsym(nil, "recvmmsg").map { unsafeBitCast($0, to: Function.self) }
}

extension UDPSocket {
    /// Receives as many queued datagrams as `batch` holds (or `maximum`, if fewer) with one
    /// `recvmmsg(2)`; returns how many (0 when nothing is waiting). Fewer than asked means the
    /// queue was empty at that moment.
    @discardableResult
    package func receive(into batch: inout DatagramBatch, maximum: Int = .max) throws(SystemError) -> Int {
        try batch.receive(fd: descriptor.rawValue, maximum: maximum)
    }
}
