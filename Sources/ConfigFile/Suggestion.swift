/// "Did you mean …?" for a mistyped name: the closest of `candidates` by edit distance
/// (Levenshtein, on characters), if it is close enough to be a plausible typo — at most a third
/// of the longer name, and at least one edit allowed.
package enum Suggestion {
    package static func closest(to word: String, among candidates: some Sequence<String>) -> String? {
        let w = Array(word.lowercased())
        var best: (String, Int)?
        for candidate in candidates {
            let c = Array(candidate.lowercased())
            let d = distance(w, c)
            let allowed = max(1, max(w.count, c.count) / 3)
            guard d <= allowed else { continue }
            if best == nil || d < best!.1 { best = (candidate, d) }
        }
        return best?.0
    }

    /// ` (did you mean "x"?)` or "".
    package static func hint(for word: String, among candidates: some Sequence<String>) -> String {
        closest(to: word, among: candidates).map { " (did you mean \"\($0)\"?)" } ?? ""
    }

    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
