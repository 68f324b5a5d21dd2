// swift-tools-version:6.1
// AnalogRemote: drive a robot board from another machine on the LAN.
//
// Layering (see README "Layout"): codec modules use the standard library only; C libraries are
// `.systemLibrary` targets holding just a module map and a shim; I/O adapters wrap one OS facility
// each; role modules hold the state machines and the loops that drive them; the executable parses
// arguments and hands off.

import PackageDescription

let argumentParser: Target.Dependency = .product(name: "ArgumentParser", package: "swift-argument-parser")
let logging: Target.Dependency = .product(name: "Logging", package: "swift-log")
let tomlKit: Target.Dependency = .product(name: "TOMLKit", package: "TOMLKit")
let propertyBased: Target.Dependency = .product(name: "PropertyBased", package: "swift-property-based")

let package = Package(
    name: "AnalogRemote",
    products: [
        .executable(name: "analog-remote", targets: ["AnalogRemoteCLI"]),
        .library(name: "RemoteWire", targets: ["RemoteWire"]),
        .library(name: "BoardProtocol", targets: ["BoardProtocol"]),
        .library(name: "MIDIFraming", targets: ["MIDIFraming"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/LebJe/TOMLKit.git", from: "0.6.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
    ],
    targets: [
        // MARK: Codecs — standard library only: no I/O, no C, no Foundation.
        .target(name: "RemoteWire"),
        .target(name: "BoardProtocol"),
        .target(name: "MIDIFraming"),

        // MARK: C system libraries — module.modulemap + shim.h, nothing else.
        // dns_sd and SDL2 are included by full path: their pkg-config flags carry -D_REENTRANT,
        // which SwiftPM refuses with a warning on every build.
        .systemLibrary(name: "CDNSSD", providers: [.apt(["libavahi-compat-libdnssd-dev"])]),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CSDL2", providers: [.apt(["libsdl2-dev"])]),

        // MARK: I/O adapters — the only modules that make syscalls or call C libraries.
        .target(name: "SystemIO"),
        .target(name: "SerialTTY", dependencies: ["SystemIO"]),
        .target(name: "ALSAMIDI", dependencies: ["CALSA", "SystemIO"]),
        .target(name: "Discovery", dependencies: ["CDNSSD", "SystemIO", "Console"]),
        .target(name: "Gamepad", dependencies: ["CSDL2", "RemoteWire", "SystemIO", "Console", tomlKit]),
        .target(name: "Console", dependencies: ["SystemIO", logging]),

        // MARK: Roles — value-type state machines plus the loop that does their I/O.
        .target(name: "Classroom", dependencies: ["RemoteWire"]),
        .target(name: "BoardLink",
                dependencies: ["BoardProtocol", "MIDIFraming", "SystemIO", "SerialTTY", "ALSAMIDI", "BoardSimulator"]),
        .target(name: "BoardSimulator",
                dependencies: ["BoardProtocol", "MIDIFraming", "SystemIO", "SerialTTY"]),
        .target(name: "Receiver",
                dependencies: ["RemoteWire", "BoardProtocol", "BoardLink", "BoardSimulator", "SystemIO",
                               "Console", "Discovery", "Classroom", logging, tomlKit]),
        .target(name: "Controller",
                dependencies: ["RemoteWire", "SystemIO", "SerialTTY", "Console", "Discovery", "Gamepad", "Classroom", logging]),

        // MARK: Benchmarks — `analog-remote bench`: the real code paths against floors measured in the same run.
        .target(name: "Bench",
                dependencies: ["RemoteWire", "BoardProtocol", "BoardLink", "BoardSimulator", "SerialTTY", "SystemIO",
                               "Console", "Receiver", "Controller", logging]),

        // MARK: The one command-line tool — parse, validate, hand off.
        .executableTarget(name: "AnalogRemoteCLI",
                          dependencies: ["RemoteWire", "SystemIO", "Console", "BoardProtocol", "SerialTTY", "BoardLink", "BoardSimulator",
                                         "Receiver", "Controller", "Discovery", "Gamepad", "Classroom", "Bench", argumentParser, logging]),

        // MARK: Tests (Swift Testing)
        .target(name: "TestSupport", dependencies: ["SystemIO"], path: "Tests/TestSupport"),
        .testTarget(name: "RemoteWireTests", dependencies: ["RemoteWire", "TestSupport", propertyBased]),
        .testTarget(name: "BoardProtocolTests", dependencies: ["BoardProtocol", "TestSupport", propertyBased]),
        .testTarget(name: "MIDIFramingTests", dependencies: ["MIDIFraming", "TestSupport", propertyBased]),
        .testTarget(name: "SystemIOTests", dependencies: ["SystemIO", "TestSupport"]),
        .testTarget(name: "BoardLinkTests",
                    dependencies: ["BoardLink", "BoardSimulator", "BoardProtocol", "MIDIFraming", "SerialTTY", "SystemIO",
                                   "TestSupport"]),
        .testTarget(name: "ReceiverTests",
                    dependencies: ["Receiver", "RemoteWire", "BoardLink", "SystemIO", "Classroom", "TestSupport", propertyBased]),
        .testTarget(name: "ControllerTests",
                    dependencies: ["Controller", "RemoteWire", "SystemIO", "Discovery", "Classroom", "TestSupport", logging, propertyBased]),
        .testTarget(name: "DiscoveryTests", dependencies: ["Discovery", "SystemIO", "Console", "TestSupport", propertyBased]),
        .testTarget(name: "GamepadTests",
                    dependencies: ["Gamepad", "Controller", "RemoteWire", "SystemIO", "Console", "TestSupport", propertyBased]),
        .testTarget(name: "ClassroomTests", dependencies: ["Classroom", "RemoteWire", "TestSupport"]),
        .testTarget(name: "BenchTests", dependencies: ["Bench", "BoardProtocol", "BoardSimulator", "TestSupport"]),
        .testTarget(name: "EndToEndTests", dependencies: ["RemoteWire", "SystemIO", "TestSupport"]),
    ]
)

for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
    ]
}
