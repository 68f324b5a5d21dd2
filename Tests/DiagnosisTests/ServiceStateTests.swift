import Diagnosis
import Testing

/// doctor's `service` line from what `systemctl show` and the journal say (the tools themselves
/// run in scripts/systemd-test.sh, under a real systemd).
@Suite struct ServiceStateTests {
    static let unit = "analog-remote.service"

    static func show(_ active: String, _ sub: String, restarts: Int = 0, result: String = "success", load: String = "loaded",
                     mainPID: Int = 0, code: Int = 0, status: Int = 0) -> String {
        "LoadState=\(load)\nActiveState=\(active)\nSubState=\(sub)\nNRestarts=\(restarts)\nResult=\(result)\n"
            + "MainPID=\(mainPID)\nExecMainCode=\(code)\nExecMainStatus=\(status)\n"
    }

    @Test func runningWithoutRestartsIsOk() {
        let check = ServiceState(unit: Self.unit, show: Self.show("active", "running", mainPID: 44), journalExit: nil).check
        #expect(check.line == "ok    service: analog-remote.service is active (running), 0 automatic restarts")
    }

    @Test func runningAfterAWatchdogRestartWarnsAndTakesTheLastRunFromTheJournal() {
        let journal = """
        {"__CURSOR":"s=1","EXIT_CODE":"exited","EXIT_STATUS":"203","COMMAND":"ExecReload"}
        {"__CURSOR":"s=2","EXIT_CODE":"dumped","EXIT_STATUS":"6","COMMAND":"ExecStart"}
        {"__CURSOR":"s=3","MESSAGE":"receiving on udp port 27183"}
        {"__CURSOR":"s=4","UNIT_RESULT":"watchdog"}
        {"__CURSOR":"s=5","EXIT_CODE":"exited","EXIT_STATUS":"1","COMMAND":"ExecReload"}
        {"__CURSOR":"s=6","MESSAGE":[1,2,3]}
        """
        let exit = ServiceState.lastExit(journalJSON: journal)
        #expect(exit == ServiceState.Exit(code: "dumped", status: "6", result: "watchdog"))
        let check = ServiceState(unit: Self.unit, show: Self.show("active", "running", restarts: 1, mainPID: 61), journalExit: exit).check
        #expect(check.verdict == .warn)
        #expect(check.detail == "analog-remote.service is active (running) but needed 1 automatic restart; last exit: killed (core dumped) by SIGABRT, a watchdog timeout")
        #expect(check.fix == "journalctl -u analog-remote.service -n 30 shows why")
    }

    @Test func restartingForAMissingBoardFailsAndPointsAtTheBoards() {
        let show = Self.show("activating", "auto-restart", restarts: 4, result: "exit-code", code: 1, status: 3)
        let check = ServiceState(unit: Self.unit, show: show, journalExit: nil).check
        #expect(check.line == "fail  service: analog-remote.service is activating (auto-restart), 4 automatic restarts; last exit: exit 3 (a device (the board) unavailable) — fix: check the boards line above; journalctl -u analog-remote.service -n 30 shows why")
        // Caught while the next attempt starts: the running attempt has no exit yet, the journal has the last.
        let starting = ServiceState(unit: Self.unit, show: Self.show("activating", "start", restarts: 4, mainPID: 90),
                                    journalExit: ServiceState.Exit(code: "exited", status: "3", result: "exit-code")).check
        #expect(starting.verdict == .fail)
        #expect(starting.detail.hasSuffix("last exit: exit 3 (a device (the board) unavailable)"))
    }

    @Test func stoppedByHandWarnsWithTheCommandThatStartsIt() {
        // A clean stop: systemctl show has its exit; an older failure in the journal does not count.
        let check = ServiceState(unit: Self.unit, show: Self.show("inactive", "dead", code: 1, status: 0),
                                 journalExit: ServiceState.Exit(code: "dumped", status: "6")).check
        #expect(check.line == "warn  service: analog-remote.service is installed but not running; last exit: exit 0 (stopped) — fix: sudo systemctl enable --now analog-remote")
    }

    @Test func aMissingUnitIsSkipped() {
        let check = ServiceState(unit: Self.unit, show: Self.show("inactive", "dead", load: "not-found"), journalExit: nil).check
        #expect(check.verdict == .skip)
        #expect(ServiceState.lastExit(journalJSON: "") == nil)
        #expect(ServiceState.lastExit(journalJSON: "-- No entries --\nnot json") == nil)
    }
}
