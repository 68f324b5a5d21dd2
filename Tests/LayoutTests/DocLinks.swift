import Foundation

/// The relative links of markdown documents, checked against the files and headings they point
/// to. Pure: it takes the documents' texts and a file-existence test and returns one line per
/// broken link, so the tests can feed it a broken document too.
///
/// A link is `[text](target)` or `![alt](target)` outside code (fenced blocks and `inline code`).
/// Links with a scheme (`https:`, `mailto:`) are not checked. A target may end in `#anchor`; an
/// anchor into a markdown file must be the slug of one of its headings, as GitHub makes them.
struct DocLinks {
    /// Repository-relative path → text, for every document whose headings anchors may name.
    var documents: [String: String]
    /// Whether a repository-relative path (file or directory) exists.
    var exists: (String) -> Bool

    /// One line per broken link in `path`: `README.md:12: docs/x.md does not exist`.
    func problems(in path: String) -> [String] {
        guard let text = documents[path] else { return ["\(path): not read"] }
        let directory = (path as NSString).deletingLastPathComponent
        var out: [String] = []
        for (line, target) in Self.links(in: text) {
            if target.contains(":") && !target.hasPrefix("#") { continue }   // https:, mailto:
            let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
            let file = String(parts[0])
            let anchor = parts.count > 1 ? String(parts[1]) : nil
            let resolved = file.isEmpty ? Optional(path) : Self.normalise(directory.isEmpty ? file : directory + "/" + file)
            guard let resolved, exists(resolved) else {
                out.append("\(path):\(line): \(file) does not exist")
                continue
            }
            if let anchor, resolved.hasSuffix(".md") {
                guard let target = documents[resolved] else {
                    out.append("\(path):\(line): \(resolved) has an anchor link but is not among the checked documents")
                    continue
                }
                if !Self.anchors(of: target).contains(anchor) {
                    out.append("\(path):\(line): \(resolved) has no heading with the anchor #\(anchor)")
                }
            }
        }
        return out
    }

    /// `a/../b/./c` → `b/c`; nil when it leaves the repository.
    static func normalise(_ path: String) -> String? {
        var parts: [Substring] = []
        for part in path.split(separator: "/") {
            switch part {
            case ".": continue
            case "..": if parts.popLast() == nil { return nil }
            default: parts.append(part)
            }
        }
        return parts.joined(separator: "/")
    }

    /// (line number, link target) for every link outside code.
    static func links(in text: String) -> [(Int, String)] {
        var out: [(Int, String)] = []
        for (number, line) in proseLines(of: text) {
            let prose = withoutInlineCode(line)
            var rest = prose[...]
            while let open = rest.range(of: "](") {
                let after = rest[open.upperBound...]
                guard let close = after.firstIndex(of: ")") else { break }
                // `[x](target "title")` → target
                let target = after[..<close].split(separator: " ", maxSplits: 1).first.map(String.init) ?? ""
                if !target.isEmpty { out.append((number, target)) }
                rest = after[after.index(after: close)...]
            }
        }
        return out
    }

    /// GitHub's anchors for the headings of a document: lower case, punctuation other than `-`
    /// and `_` dropped, spaces to `-`; a repeated slug gets `-1`, `-2`, ….
    static func anchors(of text: String) -> Set<String> {
        var seen: [String: Int] = [:]
        var out = Set<String>()
        for (_, line) in proseLines(of: text) where line.hasPrefix("#") {
            let title = line.drop(while: { $0 == "#" })
            guard title.first == " " else { continue }
            var slug = ""
            for character in title.trimmingCharacters(in: .whitespaces).lowercased() {
                if character == " " { slug.append("-") }
                else if character.isLetter || character.isNumber || character == "-" || character == "_" { slug.append(character) }
            }
            let count = seen[slug, default: 0]
            seen[slug] = count + 1
            out.insert(count == 0 ? slug : "\(slug)-\(count)")
        }
        return out
    }

    /// The lines outside fenced code blocks, numbered from 1.
    private static func proseLines(of text: String) -> [(Int, String)] {
        var out: [(Int, String)] = []
        var fence: String?
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.drop(while: { $0 == " " })
            if let open = fence {
                if trimmed.hasPrefix(open) { fence = nil }
                continue
            }
            if trimmed.hasPrefix("```") || trimmed.hasPrefix("~~~") {
                fence = String(trimmed.prefix(3))
                continue
            }
            out.append((index + 1, String(line)))
        }
        return out
    }

    /// The line with every `code span` blanked out (a span's backtick run closes it).
    private static func withoutInlineCode(_ line: String) -> String {
        var out = ""
        var rest = line[...]
        while let tick = rest.firstIndex(of: "`") {
            out += rest[..<tick]
            let run = rest[tick...].prefix(while: { $0 == "`" })
            let after = rest[run.endIndex...]
            guard let close = after.range(of: String(run)) else { out += rest[tick...]; return out }
            rest = after[close.upperBound...]
            out += " "
        }
        return out + rest
    }
}
