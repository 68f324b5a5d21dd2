/// The order people expect of robot names: runs of digits compare as numbers ("robot 2" before
/// "robot 10"), the rest without regard to case; ties fall back to the plain text, so the order
/// is total and stable.
enum NaturalOrder {
    static func less(_ a: String, _ b: String) -> Bool {
        let x = chunks(a), y = chunks(b)
        for (p, q) in zip(x, y) where p != q {
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
        if x.count != y.count { return x.count < y.count }
        return a < b
    }

    private enum Chunk: Equatable {
        /// The digits without leading zeros (compared by length, then as text), and how many
        /// digits were written.
        case number(String, Int)
        /// Lower-cased text.
        case text(String)
    }

    private static func chunks(_ s: String) -> [Chunk] {
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
