import Controller
import Discovery
import RemoteWire
import Testing

@Suite struct SendCadenceTests {
    @Test func standardContractGivesFiftyHertzBoundByTheReceiver() {
        let plan = SendCadence.plan(requestedRateHz: nil, receiver: .standard)
        #expect(plan.period == .milliseconds(20))
        #expect(plan.boundBy == .receiverRate)
        #expect(plan.honoursFailsafe)
        #expect(plan.rateHz == 50)
    }

    @Test func neverSlowerThanTheUsersRate() {
        let plan = SendCadence.plan(requestedRateHz: 100, receiver: .standard)
        #expect(plan.period == .milliseconds(10) && plan.boundBy == .requestedRate)
    }

    @Test func aShortFailsafeSpeedsTheControllerUp() {
        // 20 Hz asked by both, but a 50 ms failsafe needs five packets in 50 ms.
        let plan = SendCadence.plan(requestedRateHz: 20, receiver: TimingContract(failsafeMilliseconds: 50, rateHz: 20))
        #expect(plan.period == .milliseconds(10) && plan.boundBy == .failsafe && plan.honoursFailsafe)
    }

    @Test func theReceiversRateWinsOverASlowerRequest() {
        let plan = SendCadence.plan(requestedRateHz: 10, receiver: TimingContract(failsafeMilliseconds: 1000, rateHz: 30))
        #expect(plan.boundBy == .receiverRate && plan.rateHz == 30)
    }

    @Test func noReceiverAndNoRequestMeansFiftyHertz() {
        let plan = SendCadence.plan(requestedRateHz: nil, receiver: nil)
        #expect(plan.period == .milliseconds(20) && plan.boundBy == .standard && plan.honoursFailsafe)
    }

    @Test func anImpossibleFailsafeHitsTheFloorAndSaysSo() {
        let plan = SendCadence.plan(requestedRateHz: nil, receiver: TimingContract(failsafeMilliseconds: 4, rateHz: 50))
        #expect(plan.period == SendCadence.minimumPeriod && plan.boundBy == .floor)
        #expect(!plan.honoursFailsafe)
    }

    /// For every contract in range, the period stays within a fifth of the failsafe (or the plan
    /// says it cannot) and is never slower than the request or the receiver's rate.
    @Test func propertyPeriodRespectsEveryRule() {
        for failsafe in [1, 3, 10, 50, 99, 250, 1000, 60_000] {
            for rate in [1, 7, 50, 333, 10_000] {
                for request in [nil, 1, 50, 1000] as [Int?] {
                    let c = TimingContract(failsafeMilliseconds: failsafe, rateHz: rate)
                    let p = SendCadence.plan(requestedRateHz: request, receiver: c)
                    #expect(p.period >= SendCadence.minimumPeriod)
                    if p.boundBy != .floor {
                        #expect(p.period * 5 <= c.failsafe.duration)
                        #expect(p.period <= .seconds(1) / rate)
                        if let request { #expect(p.period <= .seconds(1) / request) }
                    }
                    #expect(p.honoursFailsafe == (p.period * 5 <= c.failsafe.duration))
                }
            }
        }
    }
}
