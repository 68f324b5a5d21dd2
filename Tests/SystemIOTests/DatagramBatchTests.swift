import SystemIO
import Testing

@Suite struct DatagramBatchTests {
    /// 100 datagrams queued from two sources: one recvmmsg takes a full batch, the next the
    /// rest, and one more finds nothing; every datagram keeps its bytes, length and source.
    @Test func oneCallTakesAWholeBatchInOrderWithSourcesAndLengths() throws {
        let server = try UDPSocket.bind(port: 0, host: "127.0.0.1")
        let target = try server.localAddress()
        let a = try UDPSocket.sender(for: target)
        let b = try UDPSocket.sender(for: target)
        for i in 0..<100 {
            try (i % 3 == 0 ? b : a).send([UInt8](repeating: UInt8(i), count: 1 + i % 9), to: target)
        }
        try a.send([UInt8](repeating: 0xEE, count: 3000), to: target)   // longer than a slot
        var batch = DatagramBatch(capacity: 64, slotSize: 2048)
        var got: [(bytes: [UInt8], length: Int, source: SocketAddress)] = []
        #expect(try server.receive(into: &batch) == 64)
        for i in 0..<batch.count { got.append((Array(batch.bytes(i)), batch.length(i), batch.source(i))) }
        #expect(try server.receive(into: &batch) == 37)
        for i in 0..<batch.count { got.append((Array(batch.bytes(i)), batch.length(i), batch.source(i))) }
        #expect(try server.receive(into: &batch) == 0)
        #expect(got.count == 101)
        for i in 0..<100 {
            #expect(got[i].bytes == [UInt8](repeating: UInt8(i), count: 1 + i % 9) && got[i].length == 1 + i % 9)
        }
        let aPort = try #require(got.first { $0.bytes.first == 1 }?.source)
        let bPort = try #require(got.first { $0.bytes.first == 0 }?.source)
        #expect(aPort != bPort && aPort.host == "127.0.0.1")
        for i in 0..<100 { #expect(got[i].source == (i % 3 == 0 ? bPort : aPort)) }
        #expect(got[100].length == 3000 && got[100].bytes.count == 2048 && got[100].source == aPort)
    }

    /// The source key: equal addresses are equal and hash alike whichever way they were made;
    /// another port or host is another key.
    @Test func sourceAddressesCompareByFamilyPortAndHost() throws {
        let x = try SocketAddress.resolve(host: "127.0.0.1", port: 5000)[0]
        let y = try #require(SocketAddress(addressBytes: [127, 0, 0, 1], port: 5000))
        #expect(x == y && x.hashValue == y.hashValue && x.description == "127.0.0.1:5000")
        #expect(x != SocketAddress(addressBytes: [127, 0, 0, 1], port: 5001))
        #expect(x != SocketAddress(addressBytes: [127, 0, 0, 2], port: 5000))
        let six = try #require(SocketAddress(addressBytes: [UInt8](repeating: 0, count: 15) + [1], port: 5000))
        #expect(six.description == "[::1]:5000" && six != x && Set([x, y, six]).count == 2)
    }
}
