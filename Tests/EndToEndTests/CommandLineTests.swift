import Foundation
import TestSupport
import Testing

/// One error style and one exit-code rule (README "Exit codes"): a usage error is one line
/// `analog-remote: …` and exit 64, before anything is opened; a typo of a command gets a
/// suggestion, also after `help`; `--version` names the program.
@Suite struct CommandLineTests {
    @Test(arguments: [
        (["receive", "--no-advertise", "--port", "0", "--failsafe-ms", "10"], "analog-remote: --failsafe-ms 10 is out of range; allowed: 50…5000 milliseconds"),
        (["control", "--peer", "127.0.0.1:9", "--rate", "0"], "analog-remote: --rate 0.0: must be between 1 and 1000 packets per second."),
        (["receive", "--no-advertise", "--port", "0", "--pairing-code", "12"], "analog-remote: --pairing-code needs --accept paired (other modes take any controller)"),
        (["recieve"], "analog-remote: unknown command \"recieve\" (did you mean \"receive\"?); commands: demo, receive, rest, reload, control, browse, advertise, board-sim, boards, gamepads, midi-inputs, stop-all, game, web, bench, doctor, plot, keygen (analog-remote help COMMAND shows its options)"),
        (["help", "nonexist"], "analog-remote: unknown command \"nonexist\"; commands: demo, receive, rest, reload, control, browse, advertise, board-sim, boards, gamepads, midi-inputs, stop-all, game, web, bench, doctor, plot, keygen (analog-remote help COMMAND shows its options)"),
        (["help", "contrl"], "analog-remote: unknown command \"contrl\" (did you mean \"control\"?); commands: demo, receive, rest, reload, control, browse, advertise, board-sim, boards, gamepads, midi-inputs, stop-all, game, web, bench, doctor, plot, keygen (analog-remote help COMMAND shows its options)"),
        // stop-all is parsed on its own (its start-up is the emergency's): the same one error style.
        (["stop-all", "--peer", "127.0.0.1:9"], "analog-remote: Missing expected argument '--session <session>'"),
        (["stop-all", "--session", "s", "--timeout", "0"], "analog-remote: --timeout must be in 0…60 seconds"),
        (["stop-all", "--session", "s", "--bogus"], "analog-remote: Unknown option '--bogus'"),
    ])
    func usageErrorsAreOneLineAndExit64(arguments: [String], line: String) throws {
        let p = try ChildProcess(analogRemote: arguments)
        #expect(p.wait() == 64)
        #expect(p.stderr == line + "\n")
        #expect(p.stdout.isEmpty, "nothing started: \(p.stdout)")
    }

    @Test func versionNamesTheProgram() throws {
        let p = try ChildProcess(analogRemote: ["--version"])
        #expect(p.wait() == 0)
        #expect(p.stdout.trimmingCharacters(in: .whitespacesAndNewlines).hasPrefix("analog-remote "))
        #expect(p.stdout.split(separator: " ").count == 2, "\(p.stdout)")
    }

    @Test func stopAllHelpReadsAsEveryOtherCommands() throws {
        let p = try ChildProcess(analogRemote: ["stop-all", "--help"])
        #expect(p.wait() == 0)
        #expect(p.stdout.contains("USAGE: analog-remote stop-all") && p.stdout.contains("--teacher-key-file"), "\(p.stdout)")
    }

    @Test func helpOfAKnownCommandStillWorks() throws {
        let p = try ChildProcess(analogRemote: ["help", "control"])
        #expect(p.wait() == 0)
        #expect(p.stdout.contains("--plain"))
    }
}
