import Foundation

/// The dependency rule written at the top of Package.swift, read back and checked against the
/// targets' `dependencies:` and the `import` lines of every Swift file. Pure: it takes the texts
/// and returns one line per violation, so the tests can feed it a broken package too.
struct DependencyRule {
    enum Tier: String, CaseIterable {
        case codecs = "codecs"
        case cLibraries = "C libs"
        case adapters = "adapters"
        case roles = "roles"
        case cli = "the CLI"
    }

    /// A target as Package.swift declares it.
    struct Target {
        var name: String
        var isTest: Bool
        var isExecutable = false
        /// Module names: local targets by name, products by their `.product(name:)`.
        var dependencies: Set<String>
    }

    /// Module → tier, from the comment block at the top of Package.swift.
    var tiers: [String: Tier] = [:]
    /// Role → the roles it may import, from the allow-list under the tiers (`//   Role → A B`).
    var roleEdges: [String: Set<String>] = [:]
    var targets: [String: Target] = [:]
    /// The targets of the library products (`.library(name:targets:)`): the only modules with a
    /// public surface; every other module declares `package` at most.
    var libraryTargets: Set<String> = []

    /// Reads the tier table and the targets from Package.swift's text.
    init(package text: String) {
        var tier: Tier?
        var inRule = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            guard line.hasPrefix("//") else {
                if inRule { break }
                continue
            }
            if line.contains("The dependency rule") { inRule = true; continue }
            guard inRule else { continue }
            let body = line.dropFirst(2)
            // `//   Controller → ControlPlane Discovery`: an allowed role → role edge list.
            if body.hasPrefix("   "), body.contains("→") {
                let sides = body.split(separator: "→", maxSplits: 1)
                let from = sides[0].trimmingCharacters(in: .whitespaces)
                if !from.isEmpty, !from.contains(" "), sides.count == 2 {
                    roleEdges[from, default: []].formUnion(sides[1].split(separator: " ").map(String.init))
                    tier = nil
                    continue
                }
            }
            if let t = Tier.allCases.first(where: { body.hasPrefix("   \($0.rawValue) ") }) {
                tier = t
            } else if !body.hasPrefix("             ") {
                tier = nil
            }
            guard let tier else { continue }
            // Module names are the capitalised words before the first lower-case word that is not a tier name.
            let words = body.split(separator: " ").map(String.init)
            let skip = Set(tier.rawValue.split(separator: " ").map(String.init))
            for word in words where !skip.contains(word) {
                guard let first = word.unicodeScalars.first, first.properties.isUppercase,
                      word.allSatisfy({ $0.isLetter || $0.isNumber }) else { break }
                tiers[word] = tier
            }
        }

        // `let logging: Target.Dependency = .product(name: "Logging", …)`
        var products: [String: String] = [:]
        for line in text.split(separator: "\n") where line.contains("Target.Dependency = .product(name:") {
            let parts = line.split(separator: " ")
            guard parts.count > 2, parts[0] == "let" else { continue }
            let variable = String(parts[1].dropLast())
            if let name = Self.quoted(in: line.split(separator: "name:", maxSplits: 1).last ?? "").first {
                products[variable] = name
            }
        }

        // `.library(name: "RemoteWire", targets: ["RemoteWire"])`
        for line in text.split(separator: "\n") where line.contains(".library(name:") {
            if let list = line.split(separator: "targets:", maxSplits: 1).dropFirst().first {
                libraryTargets.formUnion(Self.quoted(in: list))
            }
        }

        // `.target(name: "X", dependencies: ["A", logging])`, up to the next target.
        let kinds = [".target(name:", ".executableTarget(name:", ".testTarget(name:", ".systemLibrary(name:"]
        var chunks: [(kind: String, text: Substring)] = []
        var rest = Substring(text)
        while let next = kinds.compactMap({ k in rest.range(of: k).map { (k, $0) } }).min(by: { $0.1.lowerBound < $1.1.lowerBound }) {
            let after = rest[next.1.upperBound...]
            let end = kinds.compactMap { after.range(of: $0)?.lowerBound }.min() ?? after.endIndex
            chunks.append((next.0, after[..<end]))
            rest = after[end...]
        }
        for chunk in chunks {
            guard let name = Self.quoted(in: chunk.text).first else { continue }
            var dependencies = Set<String>()
            if let deps = chunk.text.range(of: "dependencies:"),
               let close = chunk.text[deps.upperBound...].firstIndex(of: "]") {
                let list = chunk.text[deps.upperBound..<close]
                dependencies.formUnion(Self.quoted(in: list))
                for item in list.split(whereSeparator: { ",[ \n".contains($0) }) {
                    if let product = products[String(item)] { dependencies.insert(product) }
                }
            }
            // Test targets, and libraries that live under Tests/ (TestSupport), are in no tier.
            let isTest = chunk.kind == ".testTarget(name:" || chunk.text.contains("path: \"Tests/")
            targets[name] = Target(name: name, isTest: isTest, isExecutable: chunk.kind == ".executableTarget(name:",
                                   dependencies: dependencies)
        }
    }

    /// The modules a Swift file imports (`import X`, `@testable import X`, `public import X`, …),
    /// inside `#if` blocks and indented too; lines inside a multi-line string literal (`"""`)
    /// are text, not imports.
    static func imports(of source: String) -> Set<String> {
        var found = Set<String>()
        var inString = false
        for raw in source.split(separator: "\n") {
            let line = raw.drop { $0 == " " || $0 == "\t" }
            let quotes = line.components(separatedBy: "\"\"\"").count - 1
            defer { if quotes % 2 == 1 { inString.toggle() } }
            guard !inString, quotes == 0 else { continue }
            var words = line.split(separator: " ").map(String.init)
            while let first = words.first, first.hasPrefix("@") || ["public", "package", "internal", "private", "fileprivate"].contains(first) {
                words.removeFirst()
            }
            guard words.count >= 2, words[0] == "import" else { continue }
            let module = words.count >= 3 && ["struct", "class", "enum", "func", "protocol", "typealias", "var", "let"].contains(words[1])
                ? words[2] : words[1]
            found.insert(String(module.prefix { $0 != "." }))
        }
        return found
    }

    /// One line per violation: `files` maps a target name to the texts of its Swift files,
    /// `listings` a C library target's name to the names of the files in its directory.
    func violations(files: [String: [String]], listings: [String: [String]] = [:]) -> [String] {
        var out: [String] = []
        let known = Set(targets.keys).union(targets.values.flatMap(\.dependencies))
        for (name, target) in targets.sorted(by: { $0.key < $1.key }) {
            let imported = (files[name] ?? []).reduce(into: Set<String>()) { $0.formUnion(Self.imports(of: $1)) }
            let packageImports = imported.intersection(known).subtracting([name])
            for dead in target.dependencies.subtracting(packageImports).sorted() {
                out.append("\(name) depends on \(dead) in Package.swift, but no file of \(name) imports it (a dead edge)")
            }
            for undeclared in packageImports.subtracting(target.dependencies).sorted() {
                out.append("\(name) imports \(undeclared), which is not among its dependencies in Package.swift")
            }
            for executable in targets.values.filter(\.isExecutable).map(\.name).sorted()
            where imported.contains(executable) || target.dependencies.contains(executable) {
                out.append("\(name) imports the executable \(executable) (nothing may)")
            }
            guard !target.isTest else { continue }
            guard let tier = tiers[name] else {
                out.append("\(name) is in no tier of the dependency rule at the top of Package.swift")
                continue
            }
            switch tier {
            case .codecs:
                for module in imported.sorted() where tiers[module] != .codecs {
                    out.append("\(name) is a codec and imports \(module) (codecs use the standard library and other codecs only)")
                }
            case .adapters:
                for module in imported.sorted() where tiers[module] == .roles || tiers[module] == .cli {
                    out.append("\(name) is an adapter and imports the \(tiers[module] == .roles ? "role" : "CLI") \(module)")
                }
            case .roles:
                for module in imported.sorted() where tiers[module] == .cli {
                    out.append("\(name) is a role and imports the CLI module \(module)")
                }
                for module in imported.sorted() where tiers[module] == .roles && module != name
                    && !(roleEdges[name]?.contains(module) ?? false) {
                    out.append("\(name) imports the role \(module), an edge not in the role → role allow-list of Package.swift")
                }
            case .cLibraries:
                let listing = Set(listings[name] ?? [])
                for extra in listing.subtracting(Self.cLibraryFiles).sorted() {
                    out.append("\(name) is a C library and holds \(extra) (only module.modulemap and shim.h)")
                }
            case .cli:
                break
            }
            let publics = (files[name] ?? []).reduce(0) { $0 + Self.publicDeclarations(in: $1) }
            if publics > 0, !libraryTargets.contains(name) {
                out.append("\(name) has \(publics) public declaration\(publics == 1 ? "" : "s") (only the library products' modules have a public surface: use package)")
            }
            if tier != .cli, (files[name] ?? []).contains(where: Self.namesExitStatus) {
                out.append("\(name) names ExitStatus (exit codes belong to the CLI: throw a typed error, ErrorReporting maps it)")
            }
        }
        for (module, _) in tiers.sorted(by: { $0.key < $1.key }) where targets[module] == nil {
            out.append("\(module) is named in the dependency rule but is no target in Package.swift")
        }
        for (role, allowed) in roleEdges.sorted(by: { $0.key < $1.key }) {
            for module in ([role] + allowed.sorted()) where tiers[module] != .roles {
                out.append("\(module) is in the role → role allow-list but is no role")
            }
        }
        return out
    }

    /// The targets and package products `root` builds on, all the way down (itself included).
    func closure(of root: String) -> Set<String> {
        var seen: Set<String> = [root], queue = [root]
        while let next = queue.popLast() {
            for dependency in targets[next]?.dependencies ?? [] where seen.insert(dependency).inserted {
                queue.append(dependency)
            }
        }
        return seen
    }

    /// What the web side (the phone page's server, its TLS and certificates, the second crypto
    /// library) is made of: a module whose name starts so is the web's.
    static let webPrefixes = ["NIO", "Hummingbird", "Crypto", "_Crypto", "X509", "SwiftASN1", "AsyncHTTPClient", "WebServer", "PhoneLink"]

    /// One line per module of the web that `roots` (the robot's executable, the Swift library)
    /// build on or whose files import: `files` as for ``violations(files:listings:)``.
    func leanCoreViolations(roots: [String], files: [String: [String]]) -> [String] {
        var out: [String] = []
        for root in roots {
            let closure = closure(of: root)
            for module in closure.sorted() where Self.webPrefixes.contains(where: module.hasPrefix) {
                out.append("\(root) builds on \(module), which is the web's (only analog-remote-web may)")
            }
            for module in closure.sorted() {
                let imported = (files[module] ?? []).reduce(into: Set<String>()) { $0.formUnion(Self.imports(of: $1)) }
                for web in imported.sorted() where Self.webPrefixes.contains(where: web.hasPrefix) && !closure.contains(web) {
                    out.append("\(module), in \(root)'s closure, imports \(web), which is the web's")
                }
            }
        }
        return out
    }

    static let cLibraryFiles: Set<String> = ["module.modulemap", "shim.h"]

    /// Declarations (and imports) marked `public` or `open`: the word after nothing but
    /// attributes and modifiers on its line; comments and multi-line strings are passed over.
    static func publicDeclarations(in source: String) -> Int {
        let modifiers: Set<Substring> = ["final", "nonisolated", "static", "class", "override", "required", "convenience",
                                         "indirect", "mutating", "dynamic", "lazy", "weak", "unowned"]
        var count = 0
        var inString = false
        for raw in source.split(separator: "\n") {
            let quotes = raw.components(separatedBy: "\"\"\"").count - 1
            defer { if quotes % 2 == 1 { inString.toggle() } }
            guard !inString, quotes == 0 else { continue }
            for word in raw.split(whereSeparator: { $0 == " " || $0 == "\t" }) {
                if word == "public" || word.hasPrefix("public(") || word == "open" { count += 1; break }
                guard word.hasPrefix("@") || modifiers.contains(word) else { break }
            }
        }
        return count
    }

    /// `ExitStatus` as a word (not `SomeExitStatus`, not `exitStatus`), anywhere in the text.
    static func namesExitStatus(_ text: String) -> Bool {
        var rest = Substring(text)
        while let r = rest.range(of: "ExitStatus") {
            let before = rest[..<r.lowerBound].last
            let after = rest[r.upperBound...].first
            if !(before.map { $0.isLetter || $0.isNumber || $0 == "_" } ?? false),
               !(after.map { $0.isLetter || $0.isNumber || $0 == "_" } ?? false) {
                return true
            }
            rest = rest[r.upperBound...]
        }
        return false
    }

    private static func quoted(in text: some StringProtocol) -> [String] {
        text.split(separator: "\"", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }
}
