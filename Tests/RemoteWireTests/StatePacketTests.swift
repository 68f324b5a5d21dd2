import PropertyBased
import RemoteWire
import Testing

@Suite struct StatePacketBadInput {
    @Test(arguments: Array(0...64).filter { $0 != 8 })
    func everyOtherLengthIsRejected(length: Int) {
        let bytes = [UInt8](repeating: 0x3F, count: length)
        #expect(throws: StatePacketError(.wrongLength, bytes: bytes)) { try StatePacket.decode(bytes) }
    }

    /// Every NaN/infinity class: ±inf, quiet and signalling NaN, both signs, min and max payloads.
    @Test(arguments: [
        0x7F80_0000, 0xFF80_0000,              // ±infinity
        0x7FC0_0000, 0xFFC0_0000,              // quiet NaN, both signs
        0x7F80_0001, 0xFF80_0001,              // signalling NaN, smallest payload
        0x7FBF_FFFF, 0xFFBF_FFFF,              // signalling NaN, largest payload
        0x7FFF_FFFF, 0xFFFF_FFFF,              // quiet NaN, all payload bits
    ] as [UInt32])
    func nonFiniteAnglesAreRejected(bits: UInt32) {
        let bytes = [UInt8(bits >> 24), UInt8(truncatingIfNeeded: bits >> 16),
                     UInt8(truncatingIfNeeded: bits >> 8), UInt8(truncatingIfNeeded: bits), 0, 0, 0, 1]
        #expect(throws: StatePacketError(.angleNotFinite, bytes: bytes)) { try StatePacket.decode(bytes) }
    }

    @Test func errorMessageNamesTheProblemAndTheBytes() {
        let e = StatePacketError(.wrongLength, bytes: [1, 2, 3])
        #expect(e.description == "not a state packet: 3 bytes, expected 8 (010203)")
        let big = StatePacketError(.wrongLength, bytes: [UInt8](repeating: 0xAB, count: 1500))
        #expect(big.length == 1500 && big.bytes.count == 64)
        #expect(big.description.hasPrefix("not a state packet: 1500 bytes"))
    }

    @Test func decodesFromASliceWithAnOffset() throws {
        let datagram: [UInt8] = [0xEE, 0x3F, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05]
        let state = try StatePacket.decode(datagram[1...])
        #expect(state == ControllerState(angle: 0.5, buttons: [.forward, .a]))
    }
}

@Suite struct StatePacketProperties {
    /// Any byte string: the decoder returns a state or a typed error, never traps; a state it
    /// returns is always in range, with no reserved bits, and re-encodes to a packet that
    /// decodes to itself.
    @Test func randomBytesNeverTrap() async {
        await propertyCheck(count: 2000, input: Gen<UInt8>.value().array(of: 0...24)) { bytes in
            do {
                let state = try StatePacket.decode(bytes)
                #expect(bytes.count == 8)
                #expect(state.angle.isFinite && abs(state.angle) <= ControllerState.maxAngle)
                #expect(state.buttons.isSubset(of: .defined))
                #expect(try StatePacket.decode(StatePacket.encode(state)) == state)
            } catch {
                #expect(bytes.count != 8 || !Float(bitPattern: UInt32(bytes[0]) << 24 | UInt32(bytes[1]) << 16 | UInt32(bytes[2]) << 8 | UInt32(bytes[3])).isFinite)
            }
        }
    }

    /// encode∘decode is the identity on every valid state (in-range angle, defined buttons).
    @Test func roundTripIsIdentity() async {
        let angles = Gen<UInt32>.value().map { Float(bitPattern: $0) }.filter { $0.isFinite && abs($0) <= ControllerState.maxAngle }
        let buttons = Gen<UInt32>.value().map { Buttons(rawValue: $0 & Buttons.defined.rawValue) }
        await propertyCheck(count: 2000, input: angles, buttons) { angle, buttons in
            let state = ControllerState(angle: angle, buttons: buttons)
            let decoded = try StatePacket.decode(StatePacket.encode(state))
            #expect(decoded.angle.bitPattern == angle.bitPattern)
            #expect(decoded.buttons == buttons)
        }
    }
}

@Suite struct ButtonNames {
    @Test(arguments: [
        ("forward+a", Buttons([.forward, .a])), ("5", [.forward, .a]), ("0x5", [.forward, .a]),
        ("0X0c", [.a, .b]), ("none", []), ("0", []), ("FORWARD+B", [.forward, .b]),
        ("x+y+l+r+start+select+home+l3+r3+left+right", Buttons(rawValue: 0x7FF0)),
    ] as [(String, Buttons)])
    func parses(text: String, expected: Buttons) {
        #expect(Buttons(parsing: text[...]) == expected)
    }

    @Test(arguments: ["", "fwd", "forward+", "+a", "0x", "0xZZ", "4294967296", "-1", "forward a"])
    func refuses(text: String) {
        #expect(Buttons(parsing: text[...]) == nil)
    }

    @Test func describesNamesInBitOrder() {
        #expect(Buttons([.b, .forward]).description == "forward+b")
        #expect(Buttons().description == "none")
        #expect(Buttons(rawValue: 0x8001).description == "forward+0x8000")
    }
}
