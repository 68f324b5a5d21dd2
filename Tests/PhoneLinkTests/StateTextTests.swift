@testable import PhoneLink
import RemoteWire
import Testing

/// The state message's short way (``StateText``) against the general one (JSONDecoder): the same
/// outcome, value or error line, for every text; and the short way really taken for the form the
/// page's script writes.
struct StateTextTests {
    static func outcome(_ decode: (String) throws(PageMessageError) -> PageMessage, _ text: String) -> Result<PageMessage, PageMessageError> {
        do throws(PageMessageError) {
            return .success(try decode(text))
        } catch {
            return .failure(error)
        }
    }

    static func same(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let fast = outcome(PageMessage.decode, text)
        let general = outcome(PageMessage.decodeGenerally, text)
        // Compared as wire bytes: -0.0 and 0.0 are different states.
        if case .success(.state(let f)) = fast, case .success(.state(let g)) = general {
            #expect(f.angle.bitPattern == g.angle.bitPattern && f.buttons == g.buttons, "\(text)", sourceLocation: sourceLocation)
        } else {
            #expect(fast == general, "\(text)", sourceLocation: sourceLocation)
        }
    }

    @Test func thePagesFormTakesTheShortWay() {
        #expect(StateText.scan(#"{"t":"s","a":0.3491,"b":5}"#)! == (0.3491, 5))
        #expect(StateText.scan(#"{"t":"s","a":-1.5708,"b":0}"#)! == (-1.5708, 0))
        #expect(StateText.scan(#"{"t":"s","a":0,"b":15}"#)! == (0, 15))
        #expect(StateText.scan(#"{"t":"s","a":-2.5e-3,"b":12}"#)! == (-0.0025, 12))
    }

    @Test(arguments: [
        #"{"t":"s", "a":0.1,"b":1}"#, #" {"t":"s","a":0.1,"b":1}"#, #"{"t":"s","a":0.1,"b":1} "#,
        #"{"t":"s","b":1,"a":0.1}"#, #"{"a":0.1,"t":"s","b":1}"#, #"{"t":"s","a":0.1,"b":1,"x":2}"#,
        #"{"t":"s","a":0.1}"#, #"{"t":"s","a":0.1,"b":}"#, #"{"t":"s","a":,"b":1}"#,
        #"{"t":"s","a":01,"b":1}"#, #"{"t":"s","a":1.,"b":1}"#, #"{"t":"s","a":.5,"b":1}"#, #"{"t":"s","a":+1,"b":1}"#,
        #"{"t":"s","a":1e,"b":1}"#, #"{"t":"s","a":1e999,"b":1}"#, #"{"t":"s","a":-1e999,"b":1}"#, #"{"t":"s","a":NaN,"b":1}"#,
        #"{"t":"s","a":inf,"b":1}"#, #"{"t":"s","a":0x1p3,"b":1}"#, #"{"t":"s","a":"0.1","b":1}"#,
        #"{"t":"s","a":0.1,"b":-1}"#, #"{"t":"s","a":0.1,"b":-0}"#, #"{"t":"s","a":0.1,"b":01}"#, #"{"t":"s","a":0.1,"b":1.0}"#,
        #"{"t":"s","a":0.1,"b":1e0}"#, #"{"t":"s","a":0.1,"b":16}"#, #"{"t":"s","a":0.1,"b":4294967296}"#,
        #"{"t":"s","a":0.1,"b":99999999999}"#, #"{"t":"s","a":0.1,"b":1}}"#, #"{"t":"s","a":0.1,"b":1"#,
        #"{"t":"s","a":-0,"b":0}"#, #"{"t":"s","a":-0.0,"b":0}"#, #"{"t":"s","a":1E+2,"b":3}"#, #"{"t":"s","a":-3.14159,"b":3}"#,
        #"{"t":"s","a":1e300,"b":0}"#, #"{"t":"s","a":4.9e-324,"b":0}"#, #"{"t":"s","a":0.30000000000000004,"b":2}"#,
        #"{"t":"s","a":0.1,"b":0}x"#, #"{"t":"S","a":0.1,"b":0}"#, #"{"t":"s","a":0.1,"b":0,"b":1}"#,
    ])
    func everyOtherFormGoesTheGeneralWayWithTheSameOutcome(text: String) {
        Self.same(text)
    }

    /// What the page's script sends (angles rounded to 4 decimals, the four buttons), and more
    /// digits than it sends, over the whole range and beyond.
    @Test func anyStateTheSameAsJSONDecoderGivesIt() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<3000 {
            let angle = Double.random(in: -4...4, using: &generator)
            let rounded = (angle * 10000).rounded() / 10000
            let buttons = Int.random(in: 0...20, using: &generator)
            Self.same(#"{"t":"s","a":\#(rounded),"b":\#(buttons)}"#)
            Self.same(#"{"t":"s","a":\#(angle),"b":\#(buttons)}"#)
            Self.same(#"{"t":"s","a":\#(Float(angle)),"b":\#(buttons & 15)}"#)
        }
    }
}
