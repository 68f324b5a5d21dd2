import Discovery
import SystemIO
import Testing

/// Names per session (Protocol.md §6.1): a display name only has to be unique within its session.
@Suite struct SessionNamesTests {
    let clock = Clock()

    @Test func theInstanceNameCarriesTheSessionsShortHash() throws {
        let a = try SessionID("KLabRemoteSample")
        #expect(a.shortHash == "6c11ba5f")
        #expect(InstanceName.forDisplay("robot2", in: a) == "robot2 [6c11ba5f]")
        let b = try SessionID("3年B組 チーム2")
        #expect(InstanceName.forDisplay("robot2", in: b) == "robot2 [81934f49]")
        // The same display name in two sessions: two instance names, so the responder renames neither.
        #expect(InstanceName.forDisplay("robot2", in: a) != InstanceName.forDisplay("robot2", in: b))
    }

    @Test(arguments: [
        ("robot2 [6c11ba5f]", "robot2", nil),
        ("robot2 [6c11ba5f] #2", "robot2", 2),
        ("robot 2 #3 [6c11ba5f] #12", "robot 2 #3", 12),
        ("3年B組 [6c11ba5f]", "3年B組", nil),
    ] as [(String, String, Int?)])
    func instanceNamesOfTheSessionReadBack(instance: String, asked: String, rename: Int?) throws {
        let parsed = try #require(InstanceName.parse(instance, in: try SessionID("KLabRemoteSample")))
        #expect(parsed.asked == asked && parsed.rename == rename)
        #expect(parsed.display == (rename.map { "\(asked) #\($0)" } ?? asked))
    }

    @Test(arguments: ["robot2", "robot2 #2", "robot2 [81934f49]", "robot2 [6c11ba5f]x", " [6c11ba5f]", "robot2 [6c11ba5f] #1"])
    func namesWithoutThisSessionsMarkAreNotParsed(instance: String) throws {
        #expect(InstanceName.parse(instance, in: try SessionID("KLabRemoteSample")) == nil)
    }

    /// `--receiver NAME` is resolved directly (Protocol.md §6.4): the instance name the controller
    /// asks the responder for, from whatever the driver typed or saw listed.
    @Test(arguments: [
        ("robot2", "robot2 [6c11ba5f]"),
        ("robot2 #2", "robot2 [6c11ba5f] #2"),                 // a renamed receiver, as listed
        ("robot2 [6c11ba5f]", "robot2 [6c11ba5f]"),            // an instance name already
        ("robot2 [6c11ba5f] #3", "robot2 [6c11ba5f] #3"),
        ("robot #1", "robot #1 [6c11ba5f]"),                   // not a rename suffix (#1)
        ("#2", "#2 [6c11ba5f]"),
        ("3年B組 チーム2", "3年B組 チーム2 [6c11ba5f]"),
    ] as [(String, String)])
    func theInstanceAControllerResolvesForItsReceiverName(wanted: String, instance: String) throws {
        let s = try SessionID("KLabRemoteSample")
        #expect(InstanceName.forWanted(wanted, in: s) == instance)
        // A display name reads back from the instance it resolves.
        if !wanted.contains("[") { #expect(InstanceName.parse(instance, in: s)?.display == wanted) }
    }

    @Test func aLongDisplayNameLeavesRoomForTheMarkAndARename() throws {
        let s = try SessionID("KLabRemoteSample")
        let long = String(repeating: "組", count: 30)      // 90 bytes
        let instance = InstanceName.forDisplay(long, in: s)
        #expect(instance.utf8.count <= InstanceName.maximumByteCount - 4)
        let renamed = instance + " #99"
        #expect(renamed.utf8.count <= InstanceName.maximumByteCount)
        #expect(InstanceName.parse(renamed, in: s)?.asked == String(repeating: "組", count: 16))
        // The responder's own alternative name keeps the mark.
        #expect(InstanceName.parse(InstanceName.alternative(to: instance), in: s)?.rename == 2)
    }

    /// Two sessions both have "robot2"; each controller with `--receiver robot2` follows its own.
    @Test func sameDisplayNameInTwoSessionsEachControllerFollowsItsOwn() throws {
        let a = try SessionID("class-a"), b = try SessionID("class-b")
        let inA = FakeReceiver(name: InstanceName.forDisplay("robot2", in: a), session: "class-a", ip: [198, 18, 0, 1])
        let inB = FakeReceiver(name: InstanceName.forDisplay("robot2", in: b), session: "class-b", ip: [198, 18, 0, 2])
        var fa = FollowReceiver(.init(session: a, receiverName: "robot2"), now: clock.at(0))
        var fb = FollowReceiver(.init(session: b, receiverName: "robot2"), now: clock.at(0))
        // Each browses its own subtype, so each sees only its own session's instance.
        let actionsA = fa.feed(inA.appears, at: clock.at(10))
        _ = fb.feed(inB.appears, at: clock.at(10))
        #expect(fa.followed == "robot2" && fa.destination == inA.address)
        #expect(fb.followed == "robot2" && fb.destination == inB.address)
        #expect(actionsA.first == .state(name: "robot2", .connecting))
        #expect(fa.summary == "following \"robot2\" at 198.18.0.1:45678 (connecting)")
    }

    /// A clash inside one session: the later one is renamed; a driver asking for the name hears
    /// about the rename (from the browse result alone) and the renamed one answers to its new name.
    @Test func aRenameInsideASessionIsShownToTheDriver() throws {
        let s = try SessionID("class-a")
        let first = InstanceName.forDisplay("robot2", in: s)
        let renamed = first + " #2"
        var f = FollowReceiver(.init(session: s, receiverName: "robot2"), now: clock.at(0))
        #expect(f.wants(instance: first))
        #expect(!f.wants(instance: renamed))
        #expect(!f.wants(instance: InstanceName.forDisplay("robot3", in: s)))
        let actions = f.handle(.found(ServiceKey(name: renamed, interface: 7)), now: clock.at(10))
        #expect(actions == [.renamed(name: "robot2 #2", asked: "robot2")])
        #expect(f.handle(.found(ServiceKey(name: renamed, interface: 8)), now: clock.at(11)).isEmpty)   // once
        #expect(BrowseListing.renameReason(asked: "robot2").hasPrefix("it asked for \"robot2\", which another receiver of this session already uses"))

        var g = FollowReceiver(.init(session: s, receiverName: "robot2 #2"), now: clock.at(0))
        #expect(g.wants(instance: renamed))
        let robot = FakeReceiver(name: renamed, session: "class-a")
        _ = g.feed(robot.appears, at: clock.at(10))
        #expect(g.followed == "robot2 #2" && g.followedInstance == renamed)
        let r = try #require(g.directory.receiver(named: "robot2 #2"))
        #expect(r.renamedFrom == "robot2" && r.instance == renamed)
    }

    @Test func aPeerIDMayNameAnyInstanceSoAllAreResolved() {
        let f = FollowReceiver(.init(session: session(), receiverName: "00000000000000bb"), now: clock.at(0))
        #expect(f.wants(instance: "anything"))
        let g = FollowReceiver(.init(session: session()), now: clock.at(0))
        #expect(g.wants(instance: "anything"))
    }
}
