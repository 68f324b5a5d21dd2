import ControlPlane
import SystemIO

/// Who may drive: a value-type state machine over source addresses, with the time passed in.
///
/// Under `--accept first` (the default), `paired` and `secret`: the first source to send a valid
/// state owns the robot until it has been silent for `timeout` plus `reclaim`; valid states from
/// anyone else are ignored meanwhile (under `paired`/`secret` only admitted sources get this far).
/// The failsafe stops the motors after `timeout` of silence; the `reclaim` window after it keeps the
/// robot for the same owner, so a flood that starves the owner for a moment cannot hand the robot
/// to one of the flooding sources. Under `any`: every valid state is accepted and its
/// source becomes the owner (latest wins). Rejected packets (bad length, NaN/infinite angle) must not be offered at all: they do
/// not refresh the owner's liveness.
///
/// Generic over the source type so tests can use plain strings.
package struct Ownership<Source: Hashable & Sendable>: Sendable {
    package enum Verdict: Equatable, Sendable {
        /// From the owner: use it.
        case accepted
        /// The sender just became the owner. `previous` is the owner it replaced: only under
        /// `any` — under `first` the old owner had already lapsed.
        case tookOwnership(previous: Source?)
        /// Someone else owns the robot: count it, drop it.
        case ignored(owner: Source)
    }

    package let policy: AcceptMode
    package let timeout: Duration
    /// How long after `timeout` of silence the robot stays reserved for its owner (every mode but `any`).
    package let reclaim: Duration
    package private(set) var owner: Source?
    /// When the owner last sent a valid state.
    package private(set) var ownerLastSeen: Tick?
    /// `timeout` + `reclaim` in nanoseconds: how long the owner may be silent.
    let lapse: Int64

    package init(policy: AcceptMode, timeout: Duration, reclaim: Duration = .zero) {
        self.policy = policy
        self.timeout = timeout
        self.reclaim = policy != .any ? max(.zero, reclaim) : .zero
        lapse = Tick.saturating(Tick.nanoseconds(timeout), Tick.nanoseconds(self.reclaim))
    }

    /// When the owner's ownership lapses, if there is an owner.
    package var deadlineTick: Tick? {
        owner == nil ? nil : ownerLastSeen.map { $0 + lapse }
    }

    /// ``deadlineTick`` as an instant.
    package var deadline: ContinuousClock.Instant? { deadlineTick?.instant }

    /// Releases an owner silent for `timeout` + `reclaim` or longer; returns the released owner.
    @discardableResult
    package mutating func expire(at now: Tick) -> Source? {
        guard let owner, let deadline = deadlineTick, now >= deadline else { return nil }
        self.owner = nil
        ownerLastSeen = nil
        return owner
    }

    @discardableResult
    package mutating func expire(at now: ContinuousClock.Instant) -> Source? { expire(at: Tick(now)) }

    package mutating func offer(from source: Source, at now: ContinuousClock.Instant) -> Verdict {
        offer(from: source, at: Tick(now))
    }

    /// A valid state from `source` at `now`.
    package mutating func offer(from source: Source, at now: Tick) -> Verdict {
        expire(at: now)
        if owner == source {
            ownerLastSeen = now
            return .accepted
        }
        if let current = owner, policy != .any {
            return .ignored(owner: current)
        }
        let previous = owner
        owner = source
        ownerLastSeen = now
        return .tookOwnership(previous: previous)
    }

    /// The owner talks from a new source (the same controller on another address, recognised by
    /// its connection): it stays the owner, its liveness unchanged. Nothing if `old` is not it.
    package mutating func move(from old: Source, to new: Source) {
        guard owner == old else { return }
        owner = new
    }

    /// Forgets the owner at once (e.g. on shutdown).
    package mutating func release() {
        owner = nil
        ownerLastSeen = nil
    }
}
