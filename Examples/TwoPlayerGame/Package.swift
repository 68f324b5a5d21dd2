// swift-tools-version:6.1
// An AnalogRemoteKit example, built as a user's package would be: it depends on the
// AnalogRemote package by path (a user names its URL and a version instead).
import PackageDescription

let package = Package(
    name: "TwoPlayerGame",
    dependencies: [
        .package(name: "AnalogRemote", path: "../.."),
    ],
    targets: [
        .executableTarget(name: "two-player-game", dependencies: [.product(name: "AnalogRemoteKit", package: "AnalogRemote")]),
    ]
)
