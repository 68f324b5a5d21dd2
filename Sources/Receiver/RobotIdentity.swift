import RemoteWire
import SystemIO

/// The receiver's robot id (Protocol.md §6.2), made once and kept in its state directory as the
/// file `robot-id`: 8 characters and a newline.
package enum RobotIdentity {
    package static let fileName = "robot-id"

    /// The id kept in `directory`, made there on the first start. When the directory cannot be
    /// used, or its file holds no robot id, the id is made for this run only and `warning` says
    /// so in one line: the receiver runs either way.
    package static func load(directory: String) -> (id: RobotID, warning: String?) {
        var rng = SystemRandomNumberGenerator()
        let fresh = RobotID.random(using: &rng)
        do {
            let bytes = try StateDirectory.keep(fileName, in: directory) { Array((fresh.text + "\n").utf8) }
            let text = String(decoding: bytes, as: UTF8.self).trimmingPrefix(while: \.isWhitespace)
            if let id = RobotID(text.prefix { !$0.isWhitespace }), text.drop(while: { !$0.isWhitespace }).allSatisfy(\.isWhitespace) {
                return (id, nil)
            }
            return (fresh, "\(directory)/\(fileName) holds no robot id (8 characters of 0-9 a-z without i l o u): "
                    + "robot id \(fresh) is for this run only (delete the file to make a lasting one)")
        } catch {
            return (fresh, "cannot keep the robot id in \(error): robot id \(fresh) is for this run only "
                    + "(give --state-dir a directory this user may write)")
        }
    }
}
