import Console
import Discovery
import DriveRecord
import Logging
import SystemIO

/// `control --record FILE` and `--input replay:FILE` (docs/record-replay.md).
extension ControlCommand {
    /// The recorder for `--record`, or nil; the file is created (and its header written) before
    /// anything is sent, so a path that cannot be written stops the controller first (exit 2).
    static func makeRecorder(_ options: ControlOptions, input: String, destination: Destination, session: ControlSession?,
                             logger: Logger) throws(CommandFailure) -> DriveRecorder? {
        guard let path = options.recordPath else { return nil }
        let header = DriveRecorder.header(input: input, receiver: destination.current?.description ?? "",
                                          session: options.session?.session.text ?? "", rate: options.rate)
        return try DriveRecorder(path: path, header: header, session: session, logger: logger)
    }

    /// Reads the recording and cuts it as asked; every failure is one line naming the file and
    /// line (exit 2), before anything is sent.
    static func makeReplaySource(path: String, options: ReplayOptions, prompt: Bool) throws(CommandFailure) -> ReplaySource {
        let recording = try RecordingFile.load(path: path)
        let plan: ReplayPlan
        do {
            plan = try ReplayPlan(recording, options: options)
        } catch {
            throw RecordingFile.problem(path, error)
        }
        return ReplaySource(plan: plan, name: "replay:\(path)", prompt: prompt,
                            notices: recording.truncationWarning(file: path).map { ["replay \($0)"] } ?? [])
    }
}
