import Foundation
import TestSupport
import Testing

@Suite struct DependencyRuleTests {
    static func packageText() throws -> String {
        try String(contentsOf: Paths.repositoryFile("Package.swift"), encoding: .utf8)
    }

    /// Target name → the texts of its Swift files (Sources/NAME and Tests/NAME, every level).
    static func files() throws -> [String: [String]] {
        var out: [String: [String]] = [:]
        let fm = FileManager.default
        for top in ["Sources", "Tests"] {
            let root = Paths.repositoryFile(top)
            for name in try fm.contentsOfDirectory(atPath: root.path) {
                let dir = root.appendingPathComponent(name)
                guard let walk = fm.enumerator(atPath: dir.path) else { continue }
                var texts: [String] = []
                for case let path as String in walk where path.hasSuffix(".swift") {
                    texts.append(try String(contentsOf: dir.appendingPathComponent(path), encoding: .utf8))
                }
                out[name, default: []] += texts
            }
        }
        return out
    }

    /// Target name → every file name under Sources/NAME (for the C library targets).
    static func listings() throws -> [String: [String]] {
        var out: [String: [String]] = [:]
        let fm = FileManager.default
        let root = Paths.repositoryFile("Sources")
        for name in try fm.contentsOfDirectory(atPath: root.path) {
            guard let walk = fm.enumerator(atPath: root.appendingPathComponent(name).path) else { continue }
            var isDirectory: ObjCBool = false
            out[name] = walk.compactMap { $0 as? String }.filter {
                fm.fileExists(atPath: root.appendingPathComponent(name).appendingPathComponent($0).path, isDirectory: &isDirectory)
                    && !isDirectory.boolValue
            }
        }
        return out
    }

    @Test func theRepositoryKeepsTheRuleWrittenAtTheTopOfPackageSwift() throws {
        let rule = DependencyRule(package: try Self.packageText())
        let violations = rule.violations(files: try Self.files(), listings: try Self.listings())
        #expect(violations.isEmpty, "\(violations.count) violations:\n\(violations.joined(separator: "\n"))")
    }

    @Test func theRuleNamesEveryModuleUnderSourcesInOneTier() throws {
        let rule = DependencyRule(package: try Self.packageText())
        let modules = try FileManager.default.contentsOfDirectory(atPath: Paths.repositoryFile("Sources").path)
        #expect(Set(modules) == Set(rule.tiers.keys), "Sources/ vs the rule's tiers")
        #expect(rule.tiers["RemoteWire"] == .codecs)
        #expect(rule.tiers["Discovery"] == .adapters)
        #expect(rule.tiers["ControlPlane"] == .roles)
        #expect(rule.tiers["AnalogRemoteCLI"] == .cli && rule.tiers["AnalogRemoteWebCLI"] == .cli && rule.tiers["CommandSupport"] == .cli)
        #expect(rule.roleEdges["Controller"] == ["ControlPlane"])
    }

    /// The robot's executable and the Swift library build on nothing of the web: no SwiftNIO,
    /// Hummingbird, swift-crypto, certificates, nor the web roles (issue 48).
    @Test func theRobotsExecutableAndTheLibraryCarryNothingOfTheWeb() throws {
        let rule = DependencyRule(package: try Self.packageText())
        let violations = rule.leanCoreViolations(roots: ["AnalogRemoteCLI", "AnalogRemoteKit"], files: try Self.files())
        #expect(violations.isEmpty, "\(violations.joined(separator: "\n"))")
        #expect(rule.closure(of: "AnalogRemoteWebCLI").contains("Hummingbird"), "the web's executable is where the web went")
        #expect(rule.closure(of: "AnalogRemoteCLI").contains("CSodium") && rule.closure(of: "AnalogRemoteCLI").contains("Receiver"))
    }

    @Test func aWebModuleInTheCoresClosureIsAViolation() {
        let package = Self.fixture.replacingOccurrences(of: #".target(name: "Player", dependencies: ["Net", "Wire"])"#,
                                                        with: #".target(name: "Player", dependencies: ["Net", "Wire", nio])"#)
            .replacingOccurrences(of: "let package = Package(", with: "let nio: Target.Dependency = .product(name: \"NIOCore\", package: \"swift-nio\")\nlet package = Package(")
        var files = Self.clean
        files["Player"]?.append("import NIOCore\n")
        files["Console"]?.append("import Crypto\n")
        #expect(DependencyRule(package: package).leanCoreViolations(roots: ["Tool"], files: files)
                == ["Tool builds on NIOCore, which is the web's (only analog-remote-web may)",
                    "Console, in Tool's closure, imports Crypto, which is the web's"])
        #expect(DependencyRule(package: Self.fixture).leanCoreViolations(roots: ["Tool"], files: Self.clean) == [])
    }

    // The checker itself, on a small package that breaks each part of the rule.

    static let fixture = """
        // The dependency rule:
        //
        //   codecs    Wire                                 import nothing but the standard library
        //   C libs    CThing                               module map + shim only
        //   adapters  Net Console
        //             one OS facility each; never a role
        //   roles     Player Referee
        //             state machines
        //   the CLI   Tool                                 nothing imports it
        //
        // Role → role edges:
        //   Referee → Player

        import PackageDescription
        let logging: Target.Dependency = .product(name: "Logging", package: "swift-log")
        let package = Package(targets: [
            .target(name: "Wire"),
            .systemLibrary(name: "CThing"),
            .target(name: "Net", dependencies: ["CThing", "Wire"]),
            .target(name: "Console", dependencies: [logging]),
            .target(name: "Player", dependencies: ["Net", "Wire"]),
            .target(name: "Referee", dependencies: ["Player"]),
            .executableTarget(name: "Tool", dependencies: ["Player", "Console", logging]),
            .testTarget(name: "PlayerTests", dependencies: ["Player"]),
        ])
        """

    static let clean: [String: [String]] = [
        "Wire": ["struct Packet {}"],
        "Net": ["#if canImport(Glibc)\nimport Glibc\n#endif\nimport CThing\nimport Wire\n"],
        "Console": ["package import Logging\n"],
        "Player": ["import Net\nimport Wire\nimport Foundation\n"],
        "Referee": ["import Player\nlet rules = \"\"\"\n    import Net\n    \"\"\"\n"],
        "Tool": ["import Player\nimport Console\nimport Logging\n"],
        "PlayerTests": ["@testable import Player\nimport Testing\n"],
    ]

    @Test func aPackageThatFollowsTheRuleHasNoViolations() {
        let rule = DependencyRule(package: Self.fixture)
        #expect(rule.tiers == ["Wire": .codecs, "CThing": .cLibraries, "Net": .adapters, "Console": .adapters,
                               "Player": .roles, "Referee": .roles, "Tool": .cli])
        #expect(rule.roleEdges == ["Referee": ["Player"]])
        #expect(rule.targets["Console"]?.dependencies == ["Logging"])
        #expect(rule.targets["Tool"]?.dependencies == ["Player", "Console", "Logging"])
        #expect(rule.violations(files: Self.clean, listings: ["CThing": ["module.modulemap", "shim.h"]]) == [])
    }

    @Test func aRoleToRoleEdgeOutsideTheAllowListIsAViolation() {
        let package = Self.fixture.replacingOccurrences(of: #"["Net", "Wire"]"#, with: #"["Net", "Referee", "Wire"]"#)
        var files = Self.clean
        files["Player"] = ["import Net\nimport Referee\nimport Wire\n"]
        #expect(DependencyRule(package: package).violations(files: files)
                == ["Player imports the role Referee, an edge not in the role → role allow-list of Package.swift"])
    }

    @Test func anAllowListThatNamesANonRoleIsAViolation() {
        let package = Self.fixture.replacingOccurrences(of: "//   Referee → Player", with: "//   Referee → Player Net")
        #expect(DependencyRule(package: package).violations(files: Self.clean)
                == ["Net is in the role → role allow-list but is no role"])
    }

    @Test(arguments: ["Net", "Player", "Wire"])
    func namingExitStatusBelowTheCLIIsAViolation(module: String) {
        var files = Self.clean
        files[module, default: []].append("/// Ends with ``ExitStatus/failure``.\nfunc f() {}\n")
        #expect(DependencyRule(package: Self.fixture).violations(files: files)
                == ["\(module) names ExitStatus (exit codes belong to the CLI: throw a typed error, ErrorReporting maps it)"])
    }

    @Test func theCLINamesExitStatusAndOtherWordsAreNotIt() {
        var files = Self.clean
        files["Tool"]?.append("let s = ExitStatus.failure\n")
        files["Player"]?.append("var exitStatus: Int32 { 0 }\nstruct ChildExitStatusReader {}\n")
        #expect(DependencyRule(package: Self.fixture).violations(files: files) == [])
    }

    @Test func aCLibraryWithMoreThanItsMapAndShimIsAViolation() {
        let listings = ["CThing": ["module.modulemap", "shim.h", "helpers.c"]]
        #expect(DependencyRule(package: Self.fixture).violations(files: Self.clean, listings: listings)
                == ["CThing is a C library and holds helpers.c (only module.modulemap and shim.h)"])
    }

    @Test func anIndentedImportCounts() {
        var files = Self.clean
        files["Net"] = ["#if canImport(Glibc)\n    import Glibc\n#endif\nimport CThing\nimport Wire\n    @testable import Player\n"]
        let package = Self.fixture.replacingOccurrences(of: #"["CThing", "Wire"]"#, with: #"["CThing", "Player", "Wire"]"#)
        #expect(DependencyRule(package: package).violations(files: files) == ["Net is an adapter and imports the role Player"])
        #expect(DependencyRule.imports(of: "#if os(Linux)\n\timport Glibc\n#endif\n") == ["Glibc"])
    }

    @Test func anImportInsideAMultiLineStringIsText() {
        #expect(DependencyRule.imports(of: "let s = \"\"\"\n    import Net\nimport Wire\n    \"\"\"\nimport Player\n") == ["Player"])
    }

    @Test func aCodecThatImportsAnythingIsAViolation() {
        var files = Self.clean
        files["Wire"] = ["#if canImport(Glibc)\nimport Glibc\n#endif\nstruct Packet {}"]
        #expect(DependencyRule(package: Self.fixture).violations(files: files)
                == ["Wire is a codec and imports Glibc (codecs use the standard library and other codecs only)"])
    }

    @Test func aCodecMayImportACodecButNotAnAdapter() {
        let package = Self.fixture
            .replacingOccurrences(of: "//   codecs    Wire  ", with: "//   codecs    Wire Frame")
            .replacingOccurrences(of: #".target(name: "Wire"),"#,
                                  with: #".target(name: "Wire"), .target(name: "Frame", dependencies: ["Wire", "Net"]),"#)
        var files = Self.clean
        files["Frame"] = ["import Wire\nimport Net\nstruct Frame {}"]
        #expect(DependencyRule(package: package).violations(files: files)
                == ["Frame is a codec and imports Net (codecs use the standard library and other codecs only)"])
    }

    @Test func aPublicDeclarationOutsideTheLibraryProductsIsAViolation() {
        let package = Self.fixture.replacingOccurrences(of: "let package = Package(targets: [",
                                                        with: "let package = Package(products: [.library(name: \"Wire\", targets: [\"Wire\"])], targets: [")
        var files = Self.clean
        files["Wire"] = ["public struct Packet {\n    public init() {}\n}"]
        files["Player"] = ["import Net\nimport Wire\n/// public by design\n@MainActor public final class Game {\n    package init() {}\n}\nlet s = \"\"\"\n    public x\n    \"\"\"\n"]
        #expect(DependencyRule(package: package).violations(files: files)
                == ["Player has 1 public declaration (only the library products' modules have a public surface: use package)"])
        #expect(DependencyRule.publicDeclarations(in: "    public private(set) var a = 1\n    @inlinable public func f() {}\n    package var b = 2\n    // public c\n") == 2)
    }

    @Test func anAdapterThatImportsARoleIsAViolation() {
        let package = Self.fixture.replacingOccurrences(of: #"["CThing", "Wire"]"#, with: #"["CThing", "Player", "Wire"]"#)
        var files = Self.clean
        files["Net"] = ["import CThing\nimport Player\nimport Wire\n"]
        #expect(DependencyRule(package: package).violations(files: files) == ["Net is an adapter and imports the role Player"])
    }

    @Test func importingTheExecutableIsAViolation() {
        let package = Self.fixture.replacingOccurrences(of: #""PlayerTests", dependencies: ["Player"]"#,
                                                        with: #""PlayerTests", dependencies: ["Player", "Tool"]"#)
        var files = Self.clean
        files["PlayerTests"] = ["@testable import Player\n@testable import Tool\n"]
        #expect(DependencyRule(package: package).violations(files: files) == ["PlayerTests imports the executable Tool (nothing may)"])
    }

    @Test func aRoleThatImportsACommandLineModuleIsAViolation() {
        let package = Self.fixture
            .replacingOccurrences(of: "//   the CLI   Tool ", with: "//   the CLI   Tool Report")
            .replacingOccurrences(of: #"    .systemLibrary(name: "CThing"),"#,
                                  with: "    .systemLibrary(name: \"CThing\"),\n    .target(name: \"Report\"),")
            .replacingOccurrences(of: #"["Net", "Wire"]"#, with: #"["Net", "Report", "Wire"]"#)
        var files = Self.clean
        files["Report"] = ["struct R {}"]
        files["Player"] = ["import Net\nimport Report\nimport Wire\n"]
        #expect(DependencyRule(package: package).violations(files: files) == ["Player is a role and imports the CLI module Report"])
    }

    @Test func aDependencyNoFileImportsIsADeadEdge() {
        let package = Self.fixture.replacingOccurrences(of: #"["Net", "Wire"]"#, with: #"["Console", "Net", "Wire"]"#)
        #expect(DependencyRule(package: package).violations(files: Self.clean)
                == ["Player depends on Console in Package.swift, but no file of Player imports it (a dead edge)"])
    }

    @Test func anImportMissingFromPackageSwiftIsAViolation() {
        var files = Self.clean
        files["Player"] = ["import Net\nimport Wire\nimport Logging\n"]
        #expect(DependencyRule(package: Self.fixture).violations(files: files)
                == ["Player imports Logging, which is not among its dependencies in Package.swift"])
    }

    @Test func aModuleInNoTierIsAViolation() {
        let package = Self.fixture.replacingOccurrences(of: #"    .systemLibrary(name: "CThing"),"#,
                                                        with: "    .systemLibrary(name: \"CThing\"),\n    .target(name: \"Extra\"),")
        #expect(DependencyRule(package: package).violations(files: Self.clean)
                == ["Extra is in no tier of the dependency rule at the top of Package.swift"])
    }
}
