internal import EventGraphText

/// A model's identity beyond its version number: a hash of its content.
///
/// The content is the model file form ``jsonText`` writes: canonical, since it writes keys in
/// one order, leaves defaults out and sorts `userInfo`, so two files that load as the same
/// model (spaced or ordered differently, `"optional": false` written or not) have one hash,
/// and any change a model can make (a name, a type, a rule, a constraint, the version, the
/// `userInfo`) gives another. That form is a public format that only grows (new keys are
/// written only when used), so a model keeps its hash across EventGraph versions.
extension Model {
  /// The SHA-256 of the model's canonical JSON, as 64 lower-case hexadecimal digits.
  public var contentHash: String { SHA256.hex(Array(jsonText.utf8)) }

  /// How `other` differs from this model, entity by entity, in words.
  ///
  /// `Person (changed)`, `Pet (only in this model)`, `Toy (only in the other)`; the model's
  /// own name or `userInfo` when they differ. Empty when the two have one content hash.
  ///
  /// - Parameter names: how the messages call this model and `other`.
  public func differences(from other: Model, names: (String, String) = ("this model", "the other")) -> [String] {
    var found: [String] = []
    if name != other.name { found.append("the model's name ('\(name)', '\(other.name)')") }
    if userInfo != other.userInfo { found.append("the model's userInfo") }
    let mine = Dictionary(descriptions.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
    let theirs = Dictionary(other.descriptions.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
    for e in descriptions {
      guard let o = theirs[e.name] else {
        found.append("\(e.name) (only in \(names.0))")
        continue
      }
      if o != e { found.append("\(e.name) (changed)") }
    }
    for e in other.descriptions where mine[e.name] == nil { found.append("\(e.name) (only in \(names.1))") }
    // Entities in another order get other identifiers: the same entities, but not the same model.
    if found.isEmpty && descriptions.map(\.name) != other.descriptions.map(\.name) {
      found.append("the order of the entities")
    }
    return found
  }
}
