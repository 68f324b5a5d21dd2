/// A robot's secret for `--accept secret` (Protocol.md "Security"): 12 random bytes — 96 bits, so
/// neither online guessing (rate limited) nor offline guessing from a captured handshake can hope
/// to find it — written as 12 words, one per byte, from a fixed list of 256 short English words.
///
/// The words are what a teacher reads out or a driver types (`control --secret WORDS`): case does
/// not matter, words may be separated by spaces, hyphens or commas, and each word may be cut to
/// its first four letters (the list's words differ there).
package struct RobotSecret: Hashable, Sendable, CustomStringConvertible {
    package static let byteCount = 12
    package let bytes: [UInt8]

    package init(bytes: [UInt8]) {
        precondition(bytes.count == Self.byteCount)
        self.bytes = bytes
    }

    /// A fresh secret from the system's CSPRNG (`SystemRandomNumberGenerator`: getrandom(2)).
    package static func random() -> RobotSecret {
        var rng = SystemRandomNumberGenerator()
        return RobotSecret(bytes: (0..<byteCount).map { _ in UInt8.random(in: 0...255, using: &rng) })
    }

    /// The 12 words, space-separated.
    package var words: String { bytes.map { Self.wordList[Int($0)] }.joined(separator: " ") }
    package var description: String { words }

    /// Parses words as a person may type them. Nil with the reason when they do not make a secret.
    package static func parse(_ text: String) -> Result<RobotSecret, SecretWordsError> {
        let separators: Set<Character> = [" ", "-", ",", "\t", "\n", "_", "."]
        let typed = text.lowercased().split(whereSeparator: { separators.contains($0) }).map(String.init)
        guard typed.count == byteCount else { return .failure(.wrongCount(typed.count)) }
        var bytes: [UInt8] = []
        for (i, word) in typed.enumerated() {
            guard word.count >= 4 || Self.index[word] != nil,
                  let b = Self.index[word] ?? Self.prefixIndex[String(word.prefix(4))],
                  Self.wordList[Int(b)].hasPrefix(word) else {
                return .failure(.unknownWord(position: i + 1, word: word))
            }
            bytes.append(b)
        }
        return .success(RobotSecret(bytes: bytes))
    }

    static let index: [String: UInt8] = Dictionary(uniqueKeysWithValues: wordList.enumerated().map { ($1, UInt8($0)) })
    static let prefixIndex: [String: UInt8] = Dictionary(uniqueKeysWithValues: wordList.enumerated().map { (String($1.prefix(4)), UInt8($0)) })

    /// 256 words, 3–6 letters, each with a first four letters of its own. Index = byte value.
    /// Never reorder: a secret's words would change meaning.
    package static let wordList: [String] = [
        "acorn", "actor", "adult", "agent", "alarm", "album", "alley", "amber", "angle", "ankle", "apple", "apron", "arena", "arrow", "atlas", "attic",
        "bacon", "badge", "bagel", "baker", "banjo", "barn", "beach", "beard", "bell", "bench", "berry", "bird", "boat", "bonus", "book", "boot",
        "box", "branch", "bread", "brick", "bridge", "brush", "bucket", "butter", "cabin", "cactus", "cake", "camel", "candle", "canoe", "canyon", "carpet",
        "carrot", "castle", "cattle", "cellar", "chair", "chalk", "cheese", "cherry", "chess", "circle", "cliff", "clock", "cloud", "clover", "coast", "cobra",
        "coffee", "comet", "copper", "corn", "cotton", "cousin", "cowboy", "crab", "crane", "crayon", "crown", "cup", "daisy", "dancer", "desert", "dinner",
        "donkey", "door", "dragon", "drum", "duck", "eagle", "earth", "echo", "eel", "elbow", "elk", "engine", "falcon", "farmer", "fence", "fern",
        "ferry", "fiddle", "finger", "fire", "fish", "flag", "flute", "forest", "fork", "fossil", "fox", "frog", "garden", "garlic", "gate", "ghost",
        "giant", "ginger", "glass", "glove", "goat", "gold", "grape", "grass", "guitar", "hammer", "harbor", "hat", "hawk", "helmet", "hill", "honey",
        "horse", "hotel", "house", "igloo", "iguana", "island", "ivory", "jacket", "jaguar", "jam", "jelly", "jewel", "juice", "jungle", "kettle", "key",
        "kitten", "kiwi", "knee", "knight", "ladder", "ladle", "lake", "lamp", "lemon", "letter", "lily", "lion", "lizard", "magnet", "mango", "maple",
        "marble", "meadow", "melon", "mirror", "monkey", "moon", "moose", "mouse", "muffin", "needle", "nest", "noodle", "ocean", "olive", "onion", "orange",
        "otter", "owl", "paddle", "palace", "panda", "paper", "parrot", "peach", "peanut", "pebble", "pencil", "pepper", "piano", "pickle", "pigeon", "pillow",
        "pirate", "planet", "plum", "pocket", "pond", "potato", "puppet", "queen", "quilt", "rabbit", "radio", "raven", "ribbon", "river", "robot", "rocket",
        "rose", "ruby", "saddle", "salmon", "sandal", "school", "seal", "shark", "sheep", "shell", "ship", "shovel", "silver", "skate", "sled", "snail",
        "snow", "soap", "socks", "spider", "spoon", "stamp", "star", "storm", "sugar", "summer", "sun", "swan", "table", "tiger", "toast", "tomato",
        "tower", "train", "tulip", "turtle", "valley", "vase", "violin", "wagon", "walrus", "water", "whale", "window", "wizard", "wolf", "yogurt", "zebra",
    ]
}

/// Why typed words are not a secret; one line a driver can act on.
package enum SecretWordsError: Error, Hashable, Sendable, CustomStringConvertible {
    case wrongCount(Int)
    case unknownWord(position: Int, word: String)

    package var description: String {
        switch self {
        case .wrongCount(let n): "a robot secret is 12 words, got \(n); copy all 12 words the robot shows"
        case .unknownWord(let i, let w): "word \(i) \"\(w)\" is not one of the secret's words; check it against the robot's screen"
        }
    }
}
