internal import EventGraphText

/// The JSON Lines shape of one object (FORMATS.md, "Import / export").
public struct ObjectRecord: Sendable, Hashable {
  public var id: String
  public var entity: String
  /// Attribute values in the entity's property order; absent values are left out.
  public var attributes: [(name: String, value: Value)]
  /// Relationship targets in property order; to-one relationships have at most one.
  public var relationships: [(name: String, targets: [String], toMany: Bool)]

  public static func == (a: Self, b: Self) -> Bool { a.json == b.json }
  public func hash(into h: inout Hasher) { h.combine(json) }

  /// The record as one line of the export format, as `eventtool export` and `show` print it.
  public var jsonText: String { json.serialized() }

  /// The record as a JSON object.
  var json: JSON {
    var fields = [
      JSONField("id", .string(id)), JSONField("entity", .string(entity)),
      JSONField("attributes", .object(attributes.map { JSONField($0.name, $0.value.json) })),
    ]
    if !relationships.isEmpty {
      fields.append(
        JSONField(
          "relationships",
          .object(
            relationships.map { r in
              JSONField(
                r.name, r.toMany ? .array(r.targets.map { .string($0) }) : r.targets.first.map { .string($0) } ?? .null)
            })))
    }
    // The personal attributes whose values could not be opened, by why (their values are
    // `null` above): Docs/privacy.md.
    for state in [SealedState.erased, .locked] {
      let names = attributes.compactMap { a -> String? in
        if case .sealed(let s) = a.value, (s.state ?? .locked) == state { return a.name }
        return nil
      }
      if !names.isEmpty { fields.append(JSONField(state.rawValue, .array(names.map { .string($0) }))) }
    }
    return .object(fields)
  }
}

extension GraphReading {
  /// The export record of a live object.
  public func record(_ id: ObjectID) throws -> ObjectRecord {
    let s = try requireObject(id)
    guard let e = model.entity(s.entity) else { throw StoreError.corrupt("unknown entity id \(s.entity.rawValue)") }
    var rels: [(String, [String], Bool)] = []
    for r in e.relationships {
      let targets = try related(id, r.id)
      if !targets.isEmpty { rels.append((r.name, targets.map { display($0) }, r.isToMany)) }
    }
    return ObjectRecord(
      id: "\(e.name)/\(id.rawValue)", entity: e.name,
      attributes: e.attributes.compactMap { a in s[a.id].map { (a.name, $0) } }, relationships: rels)
  }
}
