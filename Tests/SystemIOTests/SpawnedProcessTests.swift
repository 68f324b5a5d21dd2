#if canImport(Glibc)
import Glibc
#endif
import SystemIO
import Testing

@Suite struct SpawnedProcessTests {
    /// A pipe the parent owns must see end of file when the parent closes its write end, even
    /// while a child is running: the child gets no copy of it.
    @Test func aChildHoldsNoCopyOfTheParentsDescriptors() throws {
        var fds: [Int32] = [-1, -1]
        try #require(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let child = try SpawnedProcess(executable: "/bin/sleep", arguments: ["30"], label: "sleep")
        defer { child.stop(grace: .seconds(1)) }
        close(fds[1])
        var byte: UInt8 = 0
        let ready = try Poller.wait(for: fds[0], events: .readable, timeout: .seconds(5))
        #expect(!ready.isEmpty, "no end of file: the child holds the write end")
        #expect(read(fds[0], &byte, 1) == 0)
        #expect(!child.hasExited)
    }

    @Test func outputExitStatusAndEnvironmentComeBack() throws {
        let child = try SpawnedProcess(executable: "/bin/sh", arguments: ["-c", "echo \"$GREETING\"; echo oops >&2; exit 3"],
                                       label: "sh", environment: ["GREETING": "hello"])
        #expect(child.wait(timeout: .seconds(10)))
        #expect(child.stdout == "hello\n")
        #expect(child.stderr == "oops\n")
        #expect(child.exitStatus == 3)
    }
}
