import Diagnosis
import Testing

/// doctor's `service` line from what `systemctl show` and the journal say (the tools themselves
/// run in scripts/systemd-test.sh, under a real systemd).
@Suite struct ServiceStateTests {
    static let unit = "analog-remote.service"

    static func show(_ active: String, _ sub: String, restarts: Int = 0, result: String = "success", load: String = "loaded") -> String {
        "LoadState=\(load)\nActiveState=\(active)\nSubState=\(sub)\nNRestarts=\(restarts)\nResult=\(result)\n"
    }

    @Test func runningWithoutRestartsIsOk() {
        let check = ServiceState(unit: Self.unit, show: Self.show("active", "running"), lastExit: nil).check
        #expect(check.line == "ok    service: analog-remote.service is active (running), 0 automatic restarts")
    }

    @Test func runningAfterAWatchdogRestartWarnsAndSaysHowTheLastRunEnded() {
        let journal = """
        {"__CURSOR":"s=1","EXIT_CODE":"dumped","EXIT_STATUS":"ABRT","_PID":"1"}
        {"__CURSOR":"s=2","MESSAGE":"receiving on udp port 27183"}
        {"__CURSOR":"s=3","UNIT_RESULT":"watchdog"}
        {"__CURSOR":"s=4","MESSAGE":[1,2,3]}
        """
        let exit = ServiceState.lastExit(journalJSON: journal)
        #expect(exit == ServiceState.Exit(code: "dumped", status: "ABRT", result: "watchdog"))
        let check = ServiceState(unit: Self.unit, show: Self.show("active", "running", restarts: 1), lastExit: exit).check
        #expect(check.verdict == .warn)
        #expect(check.detail == "analog-remote.service is active (running) but needed 1 automatic restart; last exit: killed (core dumped) by SIGABRT, a watchdog timeout")
        #expect(check.fix == "journalctl -u analog-remote.service -n 30 shows why")
    }

    @Test func restartingForAMissingBoardFailsAndPointsAtTheBoards() {
        let exit = ServiceState.lastExit(journalJSON: #"{"EXIT_CODE":"exited","EXIT_STATUS":"3"}"# + "\n" + #"{"UNIT_RESULT":"exit-code"}"#)
        let check = ServiceState(unit: Self.unit, show: Self.show("activating", "auto-restart", restarts: 4, result: "exit-code"), lastExit: exit).check
        #expect(check.line == "fail  service: analog-remote.service is activating (auto-restart), 4 automatic restarts; last exit: exit 3 (a device (the board) unavailable) — fix: check the boards line above; journalctl -u analog-remote.service -n 30 shows why")
    }

    @Test func stoppedByHandWarnsWithTheCommandThatStartsIt() {
        let exit = ServiceState.Exit(code: "exited", status: "0")
        let check = ServiceState(unit: Self.unit, show: Self.show("inactive", "dead"), lastExit: exit).check
        #expect(check.line == "warn  service: analog-remote.service is installed but not running; last exit: exit 0 (stopped) — fix: sudo systemctl enable --now analog-remote")
    }

    @Test func aMissingUnitIsSkipped() {
        let check = ServiceState(unit: Self.unit, show: Self.show("inactive", "dead", load: "not-found"), lastExit: nil).check
        #expect(check.verdict == .skip)
        #expect(ServiceState.lastExit(journalJSON: "") == nil)
        #expect(ServiceState.lastExit(journalJSON: "-- No entries --\nnot json") == nil)
    }
}
