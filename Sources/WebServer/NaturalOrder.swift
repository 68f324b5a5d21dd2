/// The order people expect of robot names: runs of digits compare as numbers ("robot 2" before
/// "robot 10"), the rest without regard to case; ties fall back to the plain text, so the order
/// is total and stable.
enum NaturalOrder {
    static func less(_ a: String, _ b: String) -> Bool { Key(a) < Key(b) }

    /// A name cut into its chunks once: sorting n names compares keys, not names re-cut at each
    /// of the n log n comparisons.
    struct Key: Comparable {
        private let chunks: [Chunk]
        private let text: String

        init(_ text: String) {
            self.text = text
            chunks = NaturalOrder.chunks(text)
        }

        static func < (a: Key, b: Key) -> Bool {
            for (p, q) in zip(a.chunks, b.chunks) where p != q {
                switch (p, q) {
                case (.number(let m, let ml), .number(let n, let nl)):
                    // Compare by value first: leading zeros only break ties.
                    if m.count != n.count { return m.count < n.count }
                    if m != n { return m < n }
                    return ml < nl
                case (.number, .text): return true
                case (.text, .number): return false
                case (.text(let s), .text(let t)): return s < t
                }
            }
            if a.chunks.count != b.chunks.count { return a.chunks.count < b.chunks.count }
            return a.text < b.text
        }

        static func == (a: Key, b: Key) -> Bool { a.text == b.text }
    }

    fileprivate enum Chunk: Equatable {
        /// The digits without leading zeros (compared by length, then as text), and how many
        /// digits were written.
        case number(String, Int)
        /// Lower-cased text.
        case text(String)
    }

    fileprivate static func chunks(_ s: String) -> [Chunk] {
        var out: [Chunk] = []
        var current = ""
        var digits = false
        func flush() {
            guard !current.isEmpty else { return }
            if digits {
                let trimmed = String(current.drop { $0 == "0" })
                out.append(.number(trimmed, current.count))
            } else {
                out.append(.text(current.lowercased()))
            }
            current = ""
        }
        for c in s {
            let isDigit = c.isASCII && c.isNumber
            if isDigit != digits { flush(); digits = isDigit }
            current.append(c)
        }
        flush()
        return out
    }
}
