/// The receiver's fixed default UDP port (Protocol.md §2): `receive` binds it unless `--port`
/// says otherwise, and `control --peer HOST` sends to it when no port is given. DNS-SD still
/// announces the port actually bound (§6.1), so a receiver on another port is found as well.
public enum ReceiverPort {
    public static let standard: UInt16 = 27183
}
