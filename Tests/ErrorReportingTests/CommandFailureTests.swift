import ErrorReporting
import SystemIO
import Testing

@Suite struct CommandFailureTests {
    /// README "Exit codes": each kind of failure a role throws ends the program with its code.
    @Test(arguments: [
        (CommandFailure.Kind.failed, Int32(1)), (.badConfiguration, 2), (.deviceUnavailable, 3), (.networkUnavailable, 4),
        (.noMDNSResponder, 5), (.ambiguousReceiver, 6), (.badArgument, 64),
    ])
    func eachKindEndsWithItsDocumentedExitCode(kind: CommandFailure.Kind, code: Int32) throws {
        let report = try #require(ErrorReport.userFacing(CommandFailure("stop-all: no route", kind: kind)))
        #expect(report.status.rawValue == code)
        #expect(report.message == "stop-all: no route")
    }

    @Test func everyKindIsMapped() {
        #expect(Set(CommandFailure.Kind.allCases.map { ExitStatus($0) }).count == CommandFailure.Kind.allCases.count)
    }

    @Test func aCommandThatRanToItsEndIsSuccessOnlyWhenDone() {
        #expect(ExitStatus(CommandOutcome.done) == .success)
        #expect(ExitStatus(CommandOutcome.incomplete) == .failure)
    }
}
