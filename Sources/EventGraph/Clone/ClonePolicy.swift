// Copy policies: what a clone does with each relationship, from the model's defaults and
// the call's overrides (Docs/cloning.md, "Copy policies").

extension Relationship {
  /// The copy policy a clone uses when the call does not override it.
  ///
  /// The relationship's `copy` in the model wins; otherwise a `cascade` relationship is
  /// copied `deep` (the targets belong to the object, as a company's employees do); one
  /// whose inverse is to-many or absent is a `reference` (the copy can share the targets,
  /// as employees share a department); anything else is `skip`, because pointing the copy
  /// at the target would take the target from the original through its to-one inverse.
  public func defaultCopyPolicy(in model: Model) -> CopyPolicy {
    if let copyPolicy { return copyPolicy }
    if deleteRule == .cascade { return .deep }
    return inverseIsToOne(in: model) ? .skip : .reference
  }

  /// Whether the inverse exists and is to-one: then linking another object to a target
  /// unlinks the target from its current owner.
  func inverseIsToOne(in model: Model) -> Bool {
    inverseRelationship(in: model).map { !$0.isToMany } ?? false
  }

  /// The inverse relationship, looked up in the destination entity.
  func inverseRelationship(in model: Model) -> Relationship? {
    guard let inverse, case .relationship(let back)? = model.entity(destination)?.property(inverse)?.kind
    else { return nil }
    return back
  }
}

/// The copy policy of every relationship of every entity for one call, resolved once.
///
/// Keys of the overrides are `"Entity.relationship"` (that entity and its sub-entities)
/// or a bare `"relationship"` (every entity that has one of that name). A qualified key
/// wins over a bare one, and the nearest entity's key over an ancestor's.
struct CopyPolicyTable: Sendable {
  /// Indexed by entity, then by property; attribute slots hold `.skip`.
  private let table: [[CopyPolicy]]

  /// - Parameters:
  ///   - scope: the entity named in errors about a bare name no entity has (the root's).
  /// - Throws: `unknownEntity`, ``ErrorCode/unknownProperty``
  ///   or ``ErrorCode/notARelationship`` naming the entity and the name.
  init(model: Model, overrides: [String: CopyPolicy], scope: Entity) throws(StoreError) {
    let keys = try OverrideKeys(model: model, keys: Array(overrides.keys), scope: scope, kind: .relationship)
    var table: [[CopyPolicy]] = []
    for e in model.entities {
      var row = [CopyPolicy](repeating: .skip, count: e.properties.count)
      for r in e.relationships {
        row[Int(r.id.rawValue)] =
          keys.value(for: r.name, in: e, model: model, from: overrides)
          ?? r.defaultCopyPolicy(in: model)
      }
      table.append(row)
    }
    self.table = table
  }

  /// The policy of relationship `rel` for objects of `entity`.
  func policy(_ entity: EntityID, _ rel: PropertyID) -> CopyPolicy {
    let e = Int(entity.rawValue)
    let p = Int(rel.rawValue)
    guard e < table.count, p < table[e].count else { return .skip }
    return table[e][p]
  }
}

/// Checked keys of a per-call table of overrides (`"Entity.property"` or `"property"`).
struct OverrideKeys {
  enum Kind { case attribute, relationship }

  /// Checks every key; an error names the entity and the property.
  init(model: Model, keys: [String], scope: Entity, kind: Kind) throws(StoreError) {
    for key in keys.sorted() {
      if let dot = key.lastIndex(of: ".") {
        let entityName = String(key[..<dot])
        let name = String(key[key.index(after: dot)...])
        guard let e = model.entity(named: entityName) else { throw .unknownEntity(entityName) }
        try Self.check(name, of: e, kind: kind)
      } else if !model.entities.contains(where: { Self.has(key, $0, kind) }) {
        try Self.check(key, of: scope, kind: kind)  // throws: the scope lacks it too
        throw .unknownProperty(scope, property: key)
      }
    }
  }

  private static func has(_ name: String, _ e: Entity, _ kind: Kind) -> Bool {
    switch kind {
    case .attribute: e.attribute(named: name) != nil
    case .relationship: e.relationship(named: name) != nil
    }
  }

  private static func check(_ name: String, of e: Entity, kind: Kind) throws(StoreError) {
    guard let p = e.property(named: name) else { throw .unknownProperty(e, property: name) }
    switch (kind, p.kind) {
    case (.attribute, .attribute), (.relationship, .relationship): return
    case (.attribute, .relationship): throw .notAnAttribute(entity: e.name, property: name)
    case (.relationship, .attribute): throw .notARelationship(entity: e.name, property: name)
    }
  }

  /// The override that applies to property `name` of `entity`: the nearest qualified key,
  /// else the bare one.
  func value<V>(for name: String, in entity: Entity, model: Model, from overrides: [String: V]) -> V? {
    var current: Entity? = entity
    while let e = current {
      if let v = overrides["\(e.name).\(name)"] { return v }
      current = e.parent.flatMap { model.entity($0) }
    }
    return overrides[name]
  }
}
