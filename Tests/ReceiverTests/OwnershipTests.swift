import ControlPlane
import Receiver
import Testing

@Suite struct OwnershipTests {
    @Test func firstControllerOwnsUntilSilentThenAnotherTakesOver() {
        let o = OwnershipHarness(.first)
        #expect(o.offer("A", ms: 0) == .tookOwnership(previous: nil))
        #expect(o.offer("B", ms: 10) == .ignored(owner: "A"))
        #expect(o.offer("A", ms: 200) == .accepted)
        // B keeps trying while A is alive: ignored, and B's packets extend nothing.
        #expect(o.offer("B", ms: 449) == .ignored(owner: "A"))
        #expect(o.machine.deadline == o.clock.instant(ms: 450))
        // A lapsed at 450 ms, so B replaces nobody: under `first` a takeover is never a replacement.
        #expect(o.offer("B", ms: 450) == .tookOwnership(previous: nil))
        #expect(o.machine.owner == "B")
        #expect(o.offer("A", ms: 460) == .ignored(owner: "B"))
    }

    @Test func expireReleasesASilentOwnerOnce() {
        let o = OwnershipHarness(.first)
        _ = o.offer("A", ms: 0)
        #expect(o.expire(ms: 249) == nil)
        #expect(o.expire(ms: 250) == "A")
        #expect(o.machine.owner == nil && o.machine.deadline == nil)
        #expect(o.expire(ms: 500) == nil)
        #expect(o.offer("C", ms: 600) == .tookOwnership(previous: nil))
    }

    @Test func anyPolicyLatestPacketWins() {
        let o = OwnershipHarness(.any)
        #expect(o.offer("A", ms: 0) == .tookOwnership(previous: nil))
        #expect(o.offer("B", ms: 1) == .tookOwnership(previous: "A"))
        #expect(o.offer("B", ms: 2) == .accepted)
        #expect(o.offer("A", ms: 3) == .tookOwnership(previous: "B"))
    }
}
