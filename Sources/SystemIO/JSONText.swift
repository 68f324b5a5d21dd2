import DriveRecord

/// JSON string quoting for the lines we print and log (`"robot \"2\""`), so a name with spaces,
/// quotes or control characters stays one field a script can read back. The quoting itself is the
/// recordings' (``RecordJSON/quoted(_:)``): one JSON writer in the project, not two.
package enum JSONText {
    package static func quote(_ s: String) -> String { RecordJSON.quoted(s) }
}
