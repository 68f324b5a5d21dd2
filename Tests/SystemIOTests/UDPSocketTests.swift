import SystemIO
import Testing

@Suite struct UDPSocketTests {
    @Test func dualStackSocketTakesIPv4AndIPv6() throws {
        let server = try UDPSocket.bind(port: 0)
        let port = try server.localAddress().port
        #expect(port != 0)
        var buffer = [UInt8](repeating: 0, count: 64)
        for host in ["127.0.0.1", "::1"] {
            let target = try SocketAddress.resolve(host: host, port: port)[0]
            let client = try UDPSocket.sender(for: target)
            try client.send([1, 2, 3], to: target)
            let got = try #require(try server.receive(into: &buffer, timeout: .seconds(2)))
            #expect(got.length == 3)
            #expect(got.from.host == host)
        }
    }

    @Test func oversizeDatagramReportsItsFullLength() throws {
        let server = try UDPSocket.bind(port: 0, host: "127.0.0.1")
        let target = try server.localAddress()
        try UDPSocket.sender(for: target).send([UInt8](repeating: 7, count: 1400), to: target)
        var small = [UInt8](repeating: 0, count: 16)
        let got = try #require(try server.receive(into: &small, timeout: .seconds(2)))
        #expect(got.length == 1400)
    }

    @Test(arguments: [
        ("127.0.0.1:5000", "127.0.0.1", UInt16(5000)), ("[::1]:9", "::1", 9), ("localhost:77", "localhost", 77),
    ])
    func splitsHostAndPort(text: String, host: String, port: UInt16) throws {
        let parts = try #require(SocketAddress.split(text))
        #expect(parts.0 == host && parts.1 == port)
    }

    @Test(arguments: ["", "host", "::1:80", "[::1]", "[::1]80", "h:0", "h:70000", "h:-1", ":80"])
    func refusesMalformedHostPort(text: String) {
        #expect(SocketAddress.split(text) == nil)
    }

    @Test func unresolvableNameIsAnAddressError() {
        #expect(throws: AddressError.self) { try SocketAddress.resolve("no-such-host.invalid:5000") }
    }

    @Test func bindingAPortInUseNamesThePort() throws {
        let first = try UDPSocket.bind(port: 0, host: "127.0.0.1")
        let port = try first.localAddress().port
        do {
            _ = try UDPSocket.bind(port: port, host: "127.0.0.1")
            Issue.record("second bind succeeded")
        } catch {
            #expect(error.call == "bind")
            #expect(error.description.contains("udp port \(port)"))
            #expect(error.description.contains("address already in use"))
        }
    }
}
