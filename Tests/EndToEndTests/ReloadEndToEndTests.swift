import Foundation
import SystemIO
import TestSupport
import Testing

/// `analog-remote reload`, the service's ExecReload, against a real receiver with a fake
/// `$NOTIFY_SOCKET` and a runtime directory of the test's own: it returns only once the
/// receiver has the new configuration in force (exit 0) or has refused it (exit 2), and by then
/// the receiver has told systemd it is running again (READY=1) — what makes `systemctl reload`
/// followed at once by `is-active` say `active` on systemd 252.
@Suite(.serialized) struct ReloadEndToEndTests {
    final class Rig {
        let directory: String
        let config: String
        let map: String
        let listener: NotifyListener
        let receiver: ChildProcess

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("reload-\(UUID().uuidString.prefix(8))").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false,
                                                    attributes: [.posixPermissions: 0o700])
            config = directory + "/receive.toml"
            map = directory + "/fast-map.toml"
            try "failsafe-ms = 300\n".write(toFile: config, atomically: true, encoding: .utf8)
            try "profile = \"motors\"\n[drive]\nspeed = 100\n".write(toFile: map, atomically: true, encoding: .utf8)
            listener = try NotifyListener()
            receiver = try ChildProcess(analogRemote: ["receive", "--quiet", "--no-advertise", "--port", "0", "--board", "sim",
                                                       "--config", config],
                                        environment: ["NOTIFY_SOCKET": listener.path, "RUNTIME_DIRECTORY": directory])
        }

        func reload() throws -> (status: Int32?, stdout: String, stderr: String) {
            let command = try ChildProcess(analogRemote: ["reload", "--pid", "\(receiver.pid)"], environment: ["RUNTIME_DIRECTORY": directory])
            let status = command.wait(timeout: .seconds(20))
            return (status, command.stdout, command.stderr)
        }

        /// READY=1 messages received so far (the datagrams are in the socket before `reload` exits).
        var readies: Int {
            listener.drain()
            return listener.messages.filter { $0.text.hasPrefix("READY=1\n") }.count
        }

        deinit {
            receiver.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    @Test func reloadReturnsOnceTheNewMappingIsInForceOrRefused() throws {
        let rig = try Rig()
        #expect(rig.listener.collect(timeout: .seconds(20)) { $0.contains { $0.hasPrefix("READY=1\n") } })

        // A new mapping: in force when reload exits 0, and READY=1 already sent.
        try "failsafe-ms = 300\nmap = \"\(rig.map)\"\n".write(toFile: rig.config, atomically: true, encoding: .utf8)
        let applied = try rig.reload()
        #expect(applied.status == 0, "\(applied.stderr)")
        #expect(applied.stdout.hasPrefix("reloaded: new mapping in use"), "\(applied.stdout)")
        #expect(rig.readies == 2)

        // Nothing that can change while running: exit 0, said so.
        let unchanged = try rig.reload()
        #expect(unchanged.status == 0 && unchanged.stdout.hasPrefix("reloaded: configuration read again, mapping unchanged"),
                "\(unchanged.stdout)\(unchanged.stderr)")
        #expect(rig.readies == 3)

        // A bad config: exit 2, one line that says why; the receiver runs on with the old one.
        try "failsafe-msx = 400\n".write(toFile: rig.config, atomically: true, encoding: .utf8)
        let refused = try rig.reload()
        #expect(refused.status == 2)
        #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        #expect(refused.stderr.hasPrefix("analog-remote: reload refused, the running configuration stays: config \(rig.config): key \"failsafe-msx\""),
                "\(refused.stderr)")
        #expect(rig.readies == 4 && rig.receiver.isRunning)
        // The receipt is the receiver's own: its pid, its third reload, refused.
        let receipt = try String(contentsOfFile: rig.directory + "/reload", encoding: .utf8)
        #expect(receipt.hasPrefix("\(rig.receiver.pid) 3 refused config \(rig.config): key \"failsafe-msx\""), "\(receipt)")
    }

    @Test func withoutAReceiverOrARuntimeDirectoryItSaysSoInOneLine() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reload-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A pid no process has (pid_max is at most 2^22).
        let none = try ChildProcess(analogRemote: ["reload", "--pid", "\(1 << 23)", "--receipts", directory])
        #expect(none.wait() == 1)
        #expect(none.stderr.hasPrefix("analog-remote: cannot signal the receiver (pid 8388608): no such process"), "\(none.stderr)")
        let nowhere = try ChildProcess(analogRemote: ["reload", "--pid", "1"], environment: ["RUNTIME_DIRECTORY": ""])
        #expect(nowhere.wait() == 2)
        #expect(nowhere.stderr.hasPrefix("analog-remote: reload needs the receiver's runtime directory"), "\(nowhere.stderr)")
    }
}
