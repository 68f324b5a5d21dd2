import PhoneLink
import RemoteWire
import Testing

/// The page → server messages: what passes, what is clamped (Protocol.md §2.3), what is refused
/// with which line for the page.
struct PageMessageTests {
    @Test func aStateCarriesTheAngleAndTheFourPageButtons() throws {
        let m = try PageMessage.decode(#"{"t":"s","a":0.3491,"b":5}"#)
        #expect(m == .state(ControllerState(angle: 0.3491, buttons: [.forward, .a])))
    }

    @Test(arguments: [(2.0, Float.pi / 2), (-3.14159, -Float.pi / 2), (1e300, Float.pi / 2)])
    func anAngleBeyondAQuarterTurnIsClamped(sent: Double, expected: Float) throws {
        let m = try PageMessage.decode(#"{"t":"s","a":\#(sent),"b":0}"#)
        #expect(m == .state(ControllerState(angle: expected, buttons: [])))
    }

    @Test(arguments: [
        (#"{"t":"s","a":0.1,"b":16}"#, "buttons 16"),
        (#"{"t":"s","a":0.1,"b":-1}"#, "buttons -1"),
        (#"{"t":"s","a":0.1}"#, "missing a and b"),
        (#"{"t":"s","a":"x","b":0}"#, "not a JSON object"),
        ("{nope", "not a JSON object"),
        (#"[1,2]"#, "not a JSON object"),
        (#"{"t":"fly"}"#, "unknown message type \"fly\""),
        (#"{"t":"join","robot":"p1","name":"  "}"#, "type your name first"),
        (#"{"t":"join","robot":"p1","name":"abcdefghijklmnopqrstuvwxyzabcdefg"}"#, "at most 32 characters"),
        (#"{"t":"join","robot":"p1","name":"a\u0007b"}"#, "no control characters"),
        (#"{"t":"join","robot":"p1","name":"Ann","code":"12a"}"#, "pairing code: digits only"),
        (#"{"t":"join","name":"Ann"}"#, "missing robot"),
    ])
    func badMessagesAreRefusedWithALineForThePage(text: String, expected: String) {
        #expect(throws: PageMessageError.self) { try PageMessage.decode(text) }
        do {
            _ = try PageMessage.decode(text)
        } catch {
            #expect(error.description.contains(expected), "\(error.description)")
        }
    }

    @Test func aMessageOverTheLimitIsRefusedBeforeParsing() {
        let long = #"{"t":"stop","why":""# + String(repeating: "x", count: 600) + #""}"#
        #expect(throws: PageMessageError.tooLong(long.utf8.count)) { try PageMessage.decode(long) }
    }

    @Test func aNonFiniteAngleCannotBeWrittenInJSONButNaNTextIsRefused() {
        #expect(throws: PageMessageError.self) { try PageMessage.decode(#"{"t":"s","a":NaN,"b":0}"#) }
    }

    @Test func aJoinTrimsTheNameAndTakesAnOptionalCode() throws {
        #expect(try PageMessage.decode(#"{"t":"join","robot":"p1","name":" Ann ","code":"4711"}"#)
                == .join(robot: "p1", name: "Ann", code: "4711"))
        #expect(try PageMessage.decode(#"{"t":"join","robot":"p1","name":"Ann","code":""}"#)
                == .join(robot: "p1", name: "Ann", code: nil))
    }

    @Test func reportsAreJSONThePageParses() {
        #expect(PageReport.error("name: \"Ann\" is taken").json == #"{"t":"error","text":"name: \"Ann\" is taken"}"#)
        #expect(PageReport.robot(state: "failsafe", text: "FAILSAFE (silence): centre to resume", level: "bad").json
                == #"{"level":"bad","state":"failsafe","t":"robot","text":"FAILSAFE (silence): centre to resume"}"#)
        #expect(PageReport.status(.init(link: "driving", robotState: true)).json == #"{"link":"driving","robotState":true,"t":"status"}"#)
        #expect(PageReport.status(.init(link: "driving", receiver: "robot 1", rtt: 1.234, loss: 0.051)).json
                == #"{"link":"driving","loss":0.05,"receiver":"robot 1","rtt":1.2,"t":"status"}"#)
        #expect(PageReport.robots([.init(id: "p1", name: "r", address: "127.0.0.1:9", driver: "Ann")]).json
                == #"{"robots":[{"address":"127.0.0.1:9","driver":"Ann","id":"p1","name":"r"}],"t":"robots"}"#)
    }
}
