// swift-tools-version:6.1
// AnalogRemote: drive a robot board from another machine on the LAN.
//
// The dependency rule (docs/ARCHITECTURE.md; checked by Tests/LayoutTests from the import lines of
// Sources/*/*.swift and the targets below, so a change that breaks it fails the suite):
//
//   codecs    RemoteWire BoardProtocol MIDIFraming DriveRecord ControlWire BoardFirmware
//             import the standard library and other codecs only
//   C libs    CDNSSD CALSA CSDL2 CLibFuzzer CQRencode CSodium   module map + shim only
//   adapters  SystemIO SerialTTY ALSAMIDI Discovery Gamepad MIDIControl Console TerminalQR CommandConfig ConfigFile
//             one OS facility each; import codecs, C libs, other adapters; never a role or the CLI
//   roles     ControlPlane Game StopAll BoardSimulator BoardLink Receiver Controller Bench FuzzHarnesses PhoneLink WebServer
//             Diagnosis GuidedDemo DrivePlot AnalogRemoteKit
//             value-type state machines plus the loops that drive them; import codecs, C libs, adapters,
//             and only the roles the allow-list below names
//   the CLI   AnalogRemoteCLI AnalogRemoteWebCLI Fuzz ErrorReporting CommandSupport   the executables (parse, validate,
//             hand off; nothing imports them), the one place that maps errors to exit codes and messages, and
//             what the executables share (options, error style); no adapter or role imports any
//
// Role → role edges, the only ones allowed (a new one is a design decision: add it here):
//   Game → ControlPlane Controller
//   StopAll → ControlPlane
//   Receiver → BoardLink ControlPlane
//   Controller → ControlPlane
//   PhoneLink → ControlPlane Controller
//   WebServer → ControlPlane Controller Game PhoneLink
//   Bench → BoardSimulator ControlPlane Controller Receiver
//   Diagnosis → BoardLink
//   FuzzHarnesses → ControlPlane Controller Receiver
//   GuidedDemo → BoardSimulator
//   DrivePlot → Controller Receiver
//   AnalogRemoteKit → ControlPlane Controller Receiver
//
// Exit codes are the CLI's: roles and adapters throw typed errors (SystemIO's CommandFailure, DiscoveryError, …)
// and ErrorReporting alone maps them to a message and an exit status; nothing below the CLI names ExitStatus.
//
// Every dependency below is used by an import, and every import of a package module is declared.

import PackageDescription

let argumentParser: Target.Dependency = .product(name: "ArgumentParser", package: "swift-argument-parser")
let logging: Target.Dependency = .product(name: "Logging", package: "swift-log")
let tomlKit: Target.Dependency = .product(name: "TOMLKit", package: "TOMLKit")
// The web server's certificate and login, and the tests' independent check of the core's libsodium
// primitives: the core (ControlPlane) signs, derives and seals with libsodium alone.
let crypto: Target.Dependency = .product(name: "Crypto", package: "swift-crypto")
let propertyBased: Target.Dependency = .product(name: "PropertyBased", package: "swift-property-based")
// The phone page's server (WebServer only).
let hummingbird: Target.Dependency = .product(name: "Hummingbird", package: "hummingbird")
let hummingbirdCore: Target.Dependency = .product(name: "HummingbirdCore", package: "hummingbird")
let hummingbirdTLS: Target.Dependency = .product(name: "HummingbirdTLS", package: "hummingbird")
let hummingbirdWebSocket: Target.Dependency = .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket")
let nioCore: Target.Dependency = .product(name: "NIOCore", package: "swift-nio")
let nioWebSocket: Target.Dependency = .product(name: "NIOWebSocket", package: "swift-nio")
let nioHTTP1: Target.Dependency = .product(name: "NIOHTTP1", package: "swift-nio")
let nioPosix: Target.Dependency = .product(name: "NIOPosix", package: "swift-nio")
let nioSSL: Target.Dependency = .product(name: "NIOSSL", package: "swift-nio-ssl")
let swiftASN1: Target.Dependency = .product(name: "SwiftASN1", package: "swift-asn1")
let x509: Target.Dependency = .product(name: "X509", package: "swift-certificates")

let package = Package(
    name: "AnalogRemote",
    products: [
        // The robot and the driver: everything but the web. Its closure has no SwiftNIO, Hummingbird,
        // swift-crypto or certificates (LayoutTests), so a robot's build and package stay small.
        .executable(name: "analog-remote", targets: ["AnalogRemoteCLI"]),
        // The phone page and the teacher's dashboard (`analog-remote web` runs it).
        .executable(name: "analog-remote-web", targets: ["AnalogRemoteWebCLI"]),
        .executable(name: "analog-remote-fuzz", targets: ["Fuzz"]),
        .library(name: "RemoteWire", targets: ["RemoteWire"]),
        // The Swift API (docs/swift-api.md): RemoteSession, RobotController, RobotReceiver.
        // Its public declarations are pinned by api/AnalogRemoteKit.api (AnalogRemoteKitTests).
        .library(name: "AnalogRemoteKit", targets: ["AnalogRemoteKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/LebJe/TOMLKit.git", from: "0.6.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        // The phone page (`analog-remote web`) only: WebServer is the one module that imports these.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        // `swift package generate-documentation --target AnalogRemoteKit` (a plugin: nothing links it).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"),
    ],
    targets: [
        // MARK: Codecs — standard library only: no I/O, no C, no Foundation.
        .target(name: "RemoteWire"),
        .target(name: "BoardProtocol"),
        .target(name: "MIDIFraming"),
        // Recordings and black boxes (Protocol.md §10): JSON Lines, header and entries, reader.
        .target(name: "DriveRecord"),
        // The control messages (Protocol.md §7): header, message kinds, teacher messages, robot
        // reports (state and sensors: BoardProtocol's SensorBlock), game scores, and the byte
        // reader/writer under them.
        .target(name: "ControlWire", dependencies: ["BoardProtocol", "RemoteWire"]),
        // The kit's firmware as a value: bytes in, bytes out (board-sim and the in-process `sim` board).
        .target(name: "BoardFirmware", dependencies: ["BoardProtocol", "MIDIFraming"]),

        // MARK: C system libraries — module.modulemap + shim.h, nothing else.
        // dns_sd and SDL2 are included by full path: their pkg-config flags carry -D_REENTRANT,
        // which SwiftPM refuses with a warning on every build.
        .systemLibrary(name: "CDNSSD", providers: [.apt(["libavahi-compat-libdnssd-dev"])]),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CSDL2", providers: [.apt(["libsdl2-dev"])]),
        // libFuzzer's driver, declared weak (linked only by scripts/fuzz.sh).
        .systemLibrary(name: "CLibFuzzer"),
        .systemLibrary(name: "CQRencode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        // The core's one crypto library (ControlPlane): the envelope's AEAD, HMAC-SHA256 (and HKDF on it),
        // scrypt; runtime package libsodium23.
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),

        // MARK: I/O adapters — the only modules that make syscalls or call C libraries.
        .target(name: "SystemIO", dependencies: ["DriveRecord"]),
        .target(name: "SerialTTY", dependencies: ["SystemIO"]),
        .target(name: "ALSAMIDI", dependencies: ["CALSA", "SystemIO"]),
        .target(name: "Discovery", dependencies: ["CDNSSD", "RemoteWire", "SystemIO"]),
        .target(name: "Gamepad", dependencies: ["CSDL2", "ConfigFile", "RemoteWire", "SystemIO", tomlKit]),
        // Terminal output only: the log handler, the status line, stdout/stderr writes.
        .target(name: "Console", dependencies: ["SystemIO", logging]),
        // Config files, one way for all: reading a file safely, TOML (with its preflight) and strict
        // JSON, one error type (file, key, problem), "did you mean" for a mistyped key.
        .target(name: "ConfigFile", dependencies: ["DriveRecord", "SystemIO", tomlKit]),
        .target(name: "TerminalQR", dependencies: ["CQRencode"]),
        // A MIDI keyboard as a controller: mapping, [midi] config, session rules, the three device kinds.
        .target(name: "MIDIControl", dependencies: ["ALSAMIDI", "ConfigFile", "MIDIFraming", "RemoteWire", "SerialTTY", "SystemIO", tomlKit]),
        // A command's config file laid under its command line (receive.toml, control.toml).
        .target(name: "CommandConfig", dependencies: ["ConfigFile", "SystemIO", argumentParser, tomlKit]),

        // MARK: Roles — value-type state machines plus the loop that does their I/O.
        // The control plane (Protocol.md §7): messages, reliable channel, signing, peers, admission,
        // rate limit, stop-all guard, the receiver's side as a value type.
        .target(name: "ControlPlane", dependencies: ["CSodium", "ControlWire", "RemoteWire", "SystemIO"]),
        // `analog-remote game`: the button game's host, rounds, scores.
        .target(name: "Game", dependencies: ["BoardProtocol", "ControlWire", "Console", "ControlPlane", "Controller", "Discovery", "RemoteWire", "SystemIO", logging]),
        // `analog-remote stop-all`: the teacher's stop.
        .target(name: "StopAll", dependencies: ["ControlWire", "Console", "ControlPlane", "Discovery", "RemoteWire", "SystemIO"]),
        // `analog-remote board-sim`: the kit's firmware simulated, on a pseudo-terminal or in process.
        .target(name: "BoardSimulator", dependencies: ["BoardFirmware", "BoardProtocol", "Console", "SerialTTY", "SystemIO"]),
        // `analog-remote demo`: board-sim, receive and control as three processes of this binary.
        .target(name: "GuidedDemo", dependencies: ["BoardProtocol", "BoardSimulator", "RemoteWire", "SystemIO"]),
        .target(name: "BoardLink",
                dependencies: ["ALSAMIDI", "BoardFirmware", "BoardProtocol", "MIDIFraming", "SerialTTY", "SystemIO"]),
        .target(name: "Receiver",
                dependencies: ["ControlWire", "BoardLink", "BoardProtocol", "ConfigFile", "Console", "ControlPlane", "Discovery", "DriveRecord", "RemoteWire",
                               "SystemIO", "TerminalQR", logging]),
        .target(name: "Controller",
                dependencies: ["ConfigFile", "ControlWire", "Console", "ControlPlane", "Discovery", "DriveRecord", "Gamepad", "MIDIControl", "MIDIFraming", "RemoteWire",
                               "SystemIO", logging]),

        // The phone page, `analog-remote web`: PhoneLink is one controller per page (SendLoop +
        // ControlSession) and the page's messages, no server framework; WebServer serves the page
        // and its WebSocket over HTTPS (Hummingbird 2) and is the only module importing the
        // server, TLS and certificate packages.
        .target(name: "PhoneLink", dependencies: ["ControlWire", "Console", "ControlPlane", "Controller", "Discovery", "DriveRecord", "RemoteWire", "SystemIO",
                                                  logging]),
        .target(name: "WebServer",
                dependencies: ["ControlWire", "ConfigFile", "Console", "ControlPlane", "Controller", "Discovery", "Game", "PhoneLink", "RemoteWire", "SystemIO", "TerminalQR", logging, tomlKit,
                               hummingbird, hummingbirdCore, hummingbirdTLS, hummingbirdWebSocket, nioCore, nioHTTP1, nioPosix, nioWebSocket, nioSSL,
                               crypto, swiftASN1, x509],
                resources: [.embedInCode("Page/index.html"), .embedInCode("Page/app.js"), .embedInCode("Page/style.css"),
                            .embedInCode("Page/favicon.svg"),
                            .embedInCode("Page/teacher.html"), .embedInCode("Page/teacher-login.html"),
                            .embedInCode("Page/teacher.js"), .embedInCode("Page/teacher.css")]),

        // MARK: Benchmarks — `analog-remote bench`: the real code paths against floors measured in the same run.
        .target(name: "Bench",
                dependencies: ["BoardFirmware", "ControlWire", "BoardProtocol", "BoardSimulator", "Console", "ControlPlane", "Controller", "Receiver", "RemoteWire",
                               "SerialTTY", "SystemIO", logging]),
        // `analog-remote doctor`: what usually goes wrong on a robot, one check per line.
        .target(name: "Diagnosis", dependencies: ["BoardLink", "BoardProtocol", "ControlWire", "Discovery", "RemoteWire", "SerialTTY", "SystemIO"]),
        // `analog-remote plot`: a recording or a black box as an SVG (PNG through rsvg-convert).
        .target(name: "DrivePlot", dependencies: ["Controller", "DriveRecord", "Receiver", "RemoteWire", "SystemIO"]),

        // MARK: The Swift API — the one library meant for other people's programs: sessions,
        // a robot controller and an embeddable receiver over the roles above; everything but
        // the types named in docs/swift-api.md is internal.
        .target(name: "AnalogRemoteKit",
                dependencies: ["BoardProtocol", "ControlWire", "Console", "ControlPlane", "Controller", "Discovery", "Receiver", "RemoteWire",
                               "SystemIO", logging]),

        // MARK: The command line — parse, validate, hand off; map errors to exit codes and messages.
        .target(name: "ErrorReporting", dependencies: ["ConfigFile", "Discovery", "Gamepad", "MIDIControl", "SystemIO"]),
        // What both executables share: the options every long-running command takes, running a body
        // with one-line errors, the error style of the roots, the version.
        .target(name: "CommandSupport", dependencies: ["Console", "ErrorReporting", "SystemIO", argumentParser, logging]),
        .executableTarget(name: "AnalogRemoteCLI",
                          dependencies: ["Bench", "BoardFirmware", "BoardLink", "BoardProtocol", "BoardSimulator", "CommandConfig", "CommandSupport", "ConfigFile", "Console",
                                         "ControlPlane", "Controller", "Diagnosis", "Discovery", "DrivePlot", "ErrorReporting", "Game", "Gamepad", "GuidedDemo", "MIDIControl",
                                         "Receiver", "RemoteWire", "SerialTTY", "StopAll", "SystemIO", argumentParser, logging]),
        .executableTarget(name: "AnalogRemoteWebCLI",
                          dependencies: ["CommandSupport", "Console", "Discovery", "ErrorReporting", "PhoneLink", "RemoteWire", "StopAll", "SystemIO", "WebServer",
                                         argumentParser]),

        // MARK: Fuzzing — one harness per decoder of outside bytes; `scripts/fuzz.sh` runs them under libFuzzer.
        .target(name: "FuzzHarnesses",
                dependencies: ["ControlWire", "BoardProtocol", "ControlPlane", "Controller", "Discovery", "DriveRecord", "Gamepad", "MIDIControl", "MIDIFraming",
                               "Receiver", "RemoteWire", "SystemIO"]),
        .executableTarget(name: "Fuzz", dependencies: ["FuzzHarnesses", "CLibFuzzer"]),

        // MARK: Tests (Swift Testing) — one target per module, EndToEndTests run the built binary,
        // LayoutTests check the dependency rule above.
        .target(name: "TestSupport", dependencies: ["SystemIO"], path: "Tests/TestSupport"),
        .testTarget(name: "RemoteWireTests", dependencies: ["RemoteWire", "TestSupport", propertyBased]),
        .testTarget(name: "BoardProtocolTests", dependencies: ["BoardProtocol", "TestSupport", propertyBased]),
        .testTarget(name: "MIDIFramingTests", dependencies: ["MIDIFraming", "TestSupport", propertyBased]),
        .testTarget(name: "DriveRecordTests", dependencies: ["DrivePlot", "DriveRecord", "Receiver", "RemoteWire", "TestSupport"]),
        .testTarget(name: "SystemIOTests", dependencies: ["SystemIO"]),
        .testTarget(name: "DiscoveryTests", dependencies: ["Discovery", "ErrorReporting", "RemoteWire", "SystemIO", "TestSupport", propertyBased]),
        .testTarget(name: "GamepadTests",
                    dependencies: ["ConfigFile", "Console", "Controller", "Gamepad", "RemoteWire", "SystemIO", propertyBased]),
        .testTarget(name: "MIDIControlTests",
                    dependencies: ["ALSAMIDI", "ConfigFile", "MIDIControl", "MIDIFraming", "RemoteWire", "TestSupport"]),
        .testTarget(name: "ControlPlaneTests", dependencies: ["BoardProtocol", "ControlWire", "ControlPlane", "RemoteWire", "TestSupport", crypto, propertyBased]),
        .testTarget(name: "GameTests", dependencies: ["BoardProtocol", "ControlWire", "ControlPlane", "Game", "RemoteWire"]),
        .testTarget(name: "BoardLinkTests",
                    dependencies: ["BoardFirmware", "BoardLink", "BoardProtocol", "BoardSimulator", "MIDIFraming", "SerialTTY", "SystemIO",
                                   "TestSupport"]),
        .testTarget(name: "ReceiverTests",
                    dependencies: ["ControlWire", "BoardLink", "BoardProtocol", "ConfigFile", "ControlPlane", "DriveRecord", "Receiver", "RemoteWire", "SystemIO",
                                   "TestSupport", logging, propertyBased]),
        .testTarget(name: "ControllerTests",
                    dependencies: ["ControlWire", "Console", "ControlPlane", "Controller", "Discovery", "DriveRecord", "MIDIControl", "RemoteWire", "SerialTTY",
                                   "SystemIO", "TestSupport", logging, propertyBased]),
        .testTarget(name: "TerminalQRTests", dependencies: ["TerminalQR"]),
        .testTarget(name: "WebServerTests", dependencies: ["BoardProtocol", "ControlWire", "ControlPlane", "Game", "Controller", "PhoneLink", "RemoteWire", "SystemIO", "TestSupport", "WebServer",
                                                          hummingbird, logging]),
        .testTarget(name: "PhoneLinkTests", dependencies: ["BoardProtocol", "ControlPlane", "ControlWire", "Controller", "DriveRecord", "PhoneLink", "RemoteWire", "SystemIO", logging]),
        .testTarget(name: "BenchTests", dependencies: ["Bench", "BoardProtocol", "BoardSimulator", "Controller", "Receiver", "RemoteWire", "TestSupport"]),
        .testTarget(name: "EndToEndTests", dependencies: ["ControlWire", "ControlPlane", "Game", "RemoteWire", "SystemIO", "TestSupport"]),
        .testTarget(name: "FuzzHarnessesTests", dependencies: ["FuzzHarnesses", "TestSupport"]),
        .testTarget(name: "ErrorReportingTests", dependencies: ["ConfigFile", "Discovery", "ErrorReporting", "Gamepad", "SystemIO"]),
        .testTarget(name: "LayoutTests", dependencies: ["TestSupport"]),
        .testTarget(name: "CommandConfigTests", dependencies: ["CommandConfig", "ConfigFile", argumentParser]),
        .testTarget(name: "ConfigFileTests", dependencies: ["ConfigFile", tomlKit]),
        .testTarget(name: "StopAllTests", dependencies: ["ControlWire", "ControlPlane", "RemoteWire", "StopAll", "SystemIO"]),
        .testTarget(name: "AnalogRemoteKitTests",
                    dependencies: ["AnalogRemoteKit", "ControlPlane", "ControlWire", "Discovery", "RemoteWire", "SystemIO", "TestSupport", logging]),
        .testTarget(name: "DiagnosisTests", dependencies: ["BoardLink", "Diagnosis", "RemoteWire", "SerialTTY", "SystemIO", "TestSupport"]),
    ]
)

for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
    ]
}
