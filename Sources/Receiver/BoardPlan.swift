import BoardLink
import BoardProtocol
import ConfigFile

/// `--profile`: which board profile the receiver drives.
package enum ProfileChoice: String, Sendable, Hashable, CaseIterable {
    /// Whatever the probe finds (a mapping file's `profile` key, if any, decides instead).
    case auto
    case stock
    case motors

    package var kind: BoardProfileKind? { BoardProfileKind(rawValue: rawValue) }
}

/// What the receiver will drive once a probe told what the board is: the profile (`--profile`,
/// else the mapping file's `profile`, else the board's), the mapping (the file's, else the
/// profile's default), and the check that every address the mapping writes is on the board.
package struct BoardPlan: Sendable {
    package var choice: ProfileChoice
    /// `--map FILE`, read and checked.
    package var document: MappingDocument?
    /// A mapping given in code (tests, the bench): used as is, only checked against the board.
    package var fixed: Mapping?

    package init(choice: ProfileChoice = .auto, document: MappingDocument? = nil, fixed: Mapping? = nil) {
        self.choice = choice
        self.document = document
        self.fixed = fixed
    }

    /// The profile and mapping for a board, decided before the board is opened: when
    /// `--profile` or the file names one (or a fixed mapping is given). nil: the probe decides.
    package var decidedProfile: BoardProfileKind? { choice.kind ?? document?.profile ?? fixed?.profile }

    /// A `--profile` that contradicts the file's `profile` key: one line, or nil.
    package var conflict: String? {
        guard let forced = choice.kind, let document, let named = document.profile, named != forced else { return nil }
        return "--profile \(forced.rawValue) but \(document.file) says profile = \"\(named.rawValue)\"; "
            + "give the profile the file is written for, or leave --profile out"
    }

    /// What to drive on the board `identity` (at `device`), or the one line refusing it.
    package func resolve(_ identity: BoardIdentity, device: String) -> Result<BoardResolution, BoardPlanRefusal> {
        guard let kind = decidedProfile ?? identity.profile, identity.profile != nil else {
            return .failure(BoardPlanRefusal(reason: BoardRefusal.unknownFirmware(identity, device: device)))
        }
        let mapping: Mapping
        if let fixed {
            mapping = fixed
        } else if let document {
            do {
                mapping = try document.mapping(for: kind)
            } catch {
                // The file names no profile and does not fit this board's (e.g. 0x22 on stock).
                return .failure(BoardPlanRefusal(reason: "\(device): \(error.description) (the board runs the \(identity.profile?.rawValue ?? "unknown") firmware, memory map \(identity.mapSizeText), \(identity.addressRange))"))
            }
        } else {
            mapping = .default(for: kind)
        }
        if let missing = mapping.firstMissing(onMapOf: identity.mapSize) {
            return .failure(BoardPlanRefusal(reason: BoardRefusal.missingAddress(missing.address, role: missing.key,
                                                                                  identity: identity, device: device)))
        }
        var profile = mapping.linkProfile(base: kind.profile)
        profile.size = min(profile.size, identity.mapSize)
        if let problem = profile.problem {
            return .failure(BoardPlanRefusal(reason: "\(device): the mapping does not fit the board: \(problem)"))
        }
        return .success(BoardResolution(kind: kind, mapping: mapping, profile: profile, identity: identity))
    }
}

/// What the receiver drives on a board it accepted.
package struct BoardResolution: Sendable, Hashable {
    package let kind: BoardProfileKind
    package let mapping: Mapping
    /// The board link's profile: the safe state written first after every connect.
    package let profile: MemoryMapProfile
    package let identity: BoardIdentity
}

/// Why a board will not be driven: one line naming the device, the address, the board's map
/// size and what to do.
package struct BoardPlanRefusal: Error, Sendable, Hashable {
    package let reason: String
}
