/// One complete transaction as the board sent it, and what it means.
///
/// ```
///  W 0f 64c8\n  \r\n  <body>  \r\n>
///  └── echo ──┘       └body┘  └prompt┘
/// ```
/// The echo is the command line as the board received it, terminator included; the body is what
/// the command printed (empty for `W`/`P`); the prompt ends every transaction.
package struct BoardReply: Hashable, Sendable {
    package let echo: [UInt8]
    package let body: [UInt8]

    package init(echo: [UInt8], body: [UInt8]) {
        self.echo = echo
        self.body = body
    }

    package var response: BoardResponse { BoardResponse(body: body) }
}

/// A reply body, parsed.
package enum BoardResponse: Hashable, Sendable {
    /// Nothing printed: `W`, `P` (and `R`/`G` of zero bytes).
    case done
    /// `R`/`G`: `"xx "` per byte, lowercase hex, each followed by a space, no line break.
    case values([UInt8])
    /// `F`: `flash memmap.\r\n`.
    case flashed
    /// An unknown command letter, including an empty line: `error:undefined cmd or fmt.\r\n`.
    case undefinedCommand
    /// A body that is none of the above (a firmware we do not know).
    case unrecognised([UInt8])

    package static let flashedBody = Array("flash memmap.\r\n".utf8)
    package static let undefinedCommandBody = Array("error:undefined cmd or fmt.\r\n".utf8)

    package init(body: [UInt8]) {
        if body.isEmpty { self = .done; return }
        if body == Self.flashedBody { self = .flashed; return }
        if body == Self.undefinedCommandBody { self = .undefinedCommand; return }
        if let values = Self.values(body) { self = .values(values); return }
        self = .unrecognised(body)
    }

    /// `"64 c8 "` → `[0x64, 0xc8]`; nil unless the body is exactly pairs-and-spaces.
    static func values(_ body: [UInt8]) -> [UInt8]? {
        guard body.count % 3 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(body.count / 3)
        var i = 0
        while i < body.count {
            guard let h = ByteText.strictNibble(body[i]), let l = ByteText.strictNibble(body[i + 1]),
                  body[i + 2] == UInt8(ascii: " ") else { return nil }
            out.append(h << 4 | l)
            i += 3
        }
        return out
    }

    /// The body the firmware prints for this response (the inverse of ``init(body:)``).
    package var body: [UInt8] {
        switch self {
        case .done: []
        case .values(let v): v.flatMap { Array((ByteText.hexPair($0) + " ").utf8) }
        case .flashed: Self.flashedBody
        case .undefinedCommand: Self.undefinedCommandBody
        case .unrecognised(let b): b
        }
    }
}
