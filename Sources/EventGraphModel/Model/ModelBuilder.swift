/// Checks entity descriptions and resolves names, inheritance and inverses to IDs.
struct ModelBuilder {
  let descriptions: [EntityDescription]

  init(_ descriptions: [EntityDescription]) { self.descriptions = descriptions }

  func build() throws(ModelError) -> [Entity] {
    guard descriptions.count < Int(UInt16.max) else {
      throw .tooLarge("\(descriptions.count) entities")
    }
    var ids: [String: Int] = [:]
    for (i, d) in descriptions.enumerated() {
      try Self.checkName(d.name)
      guard ids[d.name] == nil else { throw .duplicateEntity(d.name) }
      ids[d.name] = i
    }
    // Parents first, so that a sub-entity can take its parent's resolved properties.
    let order = try inheritanceOrder(ids)
    var flat: [Int: [(name: String, attribute: AttributeDescription?, relationship: RelationshipDescription?)]] = [:]
    for i in order {
      let d = descriptions[i]
      var props = d.parent.flatMap { ids[$0] }.flatMap { flat[$0] } ?? []
      for a in d.attributes { props.append((a.name, a, nil)) }
      for r in d.relationships { props.append((r.name, nil, r)) }
      var seen = Set<String>()
      for p in props {
        try Self.checkName(p.name)
        guard seen.insert(p.name).inserted else {
          throw .duplicateProperty(entity: d.name, property: p.name)
        }
      }
      guard props.count < Int(UInt16.max) else { throw .tooLarge("\(d.name) has \(props.count) properties") }
      flat[i] = props
    }
    var entities: [Entity] = []
    for (i, d) in descriptions.enumerated() {
      var properties: [Property] = []
      for (j, p) in (flat[i] ?? []).enumerated() {
        let pid = PropertyID(rawValue: UInt16(j))
        if let a = p.attribute {
          properties.append(Property(id: pid, name: a.name, kind: .attribute(try attribute(a, pid, in: d))))
        } else if let r = p.relationship {
          properties.append(
            Property(id: pid, name: r.name, kind: .relationship(try relationship(r, pid, in: d, ids: ids, flat: flat))))
        }
      }
      let constraints = try uniquenessConstraints(d, properties)
      let subjectPath = try self.subjectPath(of: i, ids: ids, flat: flat)
      entities.append(
        Entity(
          id: EntityID(rawValue: UInt16(i)), name: d.name, uniquenessConstraints: constraints,
          parent: d.parent.flatMap { ids[$0] }.map { EntityID(rawValue: UInt16($0)) },
          isAbstract: d.isAbstract, renamingIdentifier: d.renamingIdentifier,
          properties: properties, description: d, subjectPath: subjectPath))
    }
    try checkSubjectCycles(entities)
    return entities
  }

  /// The subject key path an entity declares, or its nearest ancestor's, resolved to the
  /// IDs of to-one relationships.
  private func subjectPath(
    of i: Int, ids: [String: Int],
    flat: [Int: [(name: String, attribute: AttributeDescription?, relationship: RelationshipDescription?)]]
  ) throws(ModelError) -> [PropertyID] {
    var declaring = descriptions[i]
    while declaring.subject == nil, let p = declaring.parent, let pi = ids[p] { declaring = descriptions[pi] }
    guard let written = declaring.subject else { return [] }
    let name = descriptions[i].name
    func refuse(_ detail: String) -> ModelError { .invalidSubject(entity: name, subject: written, detail: detail) }
    let steps = written.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    guard !steps.contains(where: \.isEmpty) else { throw refuse("an empty name in the key path") }
    var current = i
    var path: [PropertyID] = []
    for step in steps {
      let here = descriptions[current].name
      guard let j = (flat[current] ?? []).firstIndex(where: { $0.name == step }) else {
        throw refuse("'\(step)' is no relationship of \(here)")
      }
      guard let r = (flat[current] ?? [])[j].relationship else {
        throw refuse("'\(step)' of \(here) is an attribute, not a to-one relationship")
      }
      guard !r.isToMany else { throw refuse("'\(step)' of \(here) is to-many: a subject is one object") }
      guard let next = ids[r.destination] else { throw refuse("'\(step)' of \(here) leads to no entity") }
      path.append(PropertyID(rawValue: UInt16(j)))
      current = next
    }
    return path
  }

  /// Refuses subject paths that lead, from entity to entity, back to where they started:
  /// such an object would have no subject.
  private func checkSubjectCycles(_ entities: [Entity]) throws(ModelError) {
    for start in entities where !start.subjectPath.isEmpty {
      var seen: Set<EntityID> = [start.id]
      var current = start
      while !current.subjectPath.isEmpty {
        for step in current.subjectPath {
          guard case .relationship(let r)? = current.property(step)?.kind else { break }
          current = entities[Int(r.destination.rawValue)]
        }
        guard seen.insert(current.id).inserted else {
          throw .invalidSubject(
            entity: start.name, subject: start.description.subject ?? "",
            detail: "the subjects' key paths form a cycle through \(current.name)")
        }
      }
    }
  }

  /// The entity's own uniqueness constraints, resolved to attributes (inherited ones
  /// allowed): each names one or more attributes, none twice, none transient.
  private func uniquenessConstraints(_ d: EntityDescription, _ properties: [Property]) throws(ModelError)
    -> [[Attribute]]
  {
    var result: [[Attribute]] = []
    for names in d.uniquenessConstraints {
      let written = "[" + names.joined(separator: ", ") + "]"
      func refuse(_ detail: String) -> ModelError {
        .invalidConstraint(entity: d.name, constraint: written, detail: detail)
      }
      guard !names.isEmpty else { throw refuse("names no attribute") }
      var attributes: [Attribute] = []
      for name in names {
        guard let p = properties.first(where: { $0.name == name }) else {
          throw refuse("'\(name)' is no attribute of \(d.name)")
        }
        guard case .attribute(let a) = p.kind else { throw refuse("'\(name)' is a relationship, not an attribute") }
        guard !a.isTransient else { throw refuse("'\(name)' is transient: the store keeps no value") }
        guard !attributes.contains(where: { $0.id == a.id }) else { throw refuse("'\(name)' is named twice") }
        attributes.append(a)
      }
      guard !result.contains(where: { $0.map(\.id) == attributes.map(\.id) }) else {
        throw refuse("is declared twice")
      }
      result.append(attributes)
    }
    return result
  }

  private func inheritanceOrder(_ ids: [String: Int]) throws(ModelError) -> [Int] {
    var order: [Int] = []
    var state = [Int](repeating: 0, count: descriptions.count)  // 0 new, 1 visiting, 2 done
    for start in descriptions.indices {
      var chain: [Int] = []
      var current: Int? = start
      while let c = current, state[c] != 2 {
        guard state[c] == 0 else { throw .inheritanceCycle(entity: descriptions[c].name) }
        state[c] = 1
        chain.append(c)
        if let p = descriptions[c].parent {
          guard let pi = ids[p] else { throw .unknownParent(entity: descriptions[c].name, parent: p) }
          current = pi
        } else {
          current = nil
        }
      }
      for c in chain.reversed() {
        state[c] = 2
        order.append(c)
      }
    }
    return order
  }

  private func attribute(_ a: AttributeDescription, _ id: PropertyID, in d: EntityDescription) throws(ModelError)
    -> Attribute
  {
    var value: Value? = nil
    if let v = a.defaultValue {
      do {
        value = try v.converted(to: a.type)
      } catch {
        throw .invalidDefault(entity: d.name, attribute: a.name, detail: error.description)
      }
    }
    let rules = try self.rules(a, in: d)
    if let rules, let value, let broken = rules.violation(value) {
      throw .invalidDefault(entity: d.name, attribute: a.name, detail: broken)
    }
    func refuse(_ detail: String) -> ModelError { .invalidRule(entity: d.name, attribute: a.name, detail: detail) }
    if a.isTransformable && a.type != .binary { throw refuse("a transformable attribute holds binary data") }
    if a.transformer != nil && !a.isTransformable { throw refuse("'transformer' needs type transformable") }
    if a.isTransient && a.isIndexed { throw refuse("a transient attribute has no value to index") }
    if a.isTransient && a.isPersonal { throw refuse("a transient attribute has no value to protect") }
    return Attribute(
      id: id, name: a.name, type: a.type, isOptional: a.isOptional,
      // A transient attribute's default stays in its description; the store keeps no value.
      defaultValue: a.isTransient ? nil : value, renamingIdentifier: a.renamingIdentifier, isIndexed: a.isIndexed,
      rules: rules, isTransformable: a.isTransformable, transformer: a.transformer, isTransient: a.isTransient,
      isPersonal: a.isPersonal, userInfo: a.userInfo)
  }

  /// The attribute's value rules, checked against its type.
  private func rules(_ a: AttributeDescription, in d: EntityDescription) throws(ModelError) -> ValueRules? {
    func refuse(_ detail: String) -> ModelError { .invalidRule(entity: d.name, attribute: a.name, detail: detail) }
    var bounds: [Value?] = []
    for (key, v) in [("minValue", a.minValue), ("maxValue", a.maxValue)] {
      guard let v else {
        bounds.append(nil)
        continue
      }
      guard a.type.isNumeric || a.type == .date else { throw refuse("\(key) needs a number or date attribute") }
      do {
        bounds.append(try v.converted(to: a.type))
      } catch {
        throw refuse("\(key): \(error.description)")
      }
    }
    if (a.minLength != nil || a.maxLength != nil) && a.type != .string && a.type != .binary {
      throw refuse("minLength and maxLength need a string, binary or transformable attribute")
    }
    if a.regularExpression != nil && a.type != .string {
      throw refuse("regularExpression needs a string attribute")
    }
    do {
      return try ValueRules(
        minValue: bounds[0], maxValue: bounds[1], minLength: a.minLength, maxLength: a.maxLength,
        regularExpression: a.regularExpression)
    } catch {
      throw refuse(error.description)
    }
  }

  private func relationship(
    _ r: RelationshipDescription, _ id: PropertyID, in d: EntityDescription, ids: [String: Int],
    flat: [Int: [(name: String, attribute: AttributeDescription?, relationship: RelationshipDescription?)]]
  ) throws(ModelError) -> Relationship {
    guard let dest = ids[r.destination] else {
      throw .unknownDestination(entity: d.name, relationship: r.name, destination: r.destination)
    }
    if r.isOrdered && !r.isToMany { throw .orderedToOne(entity: d.name, relationship: r.name) }
    if let lo = r.minCount, lo < 0 {
      throw .invalidCounts(entity: d.name, relationship: r.name, detail: "minCount is negative")
    }
    if let lo = r.minCount, let hi = r.maxCount, lo > hi {
      throw .invalidCounts(entity: d.name, relationship: r.name, detail: "minCount \(lo) exceeds maxCount \(hi)")
    }
    if !r.isToMany, let hi = r.maxCount, hi != 1 {
      throw .invalidCounts(entity: d.name, relationship: r.name, detail: "a to-one relationship has maxCount 1")
    }
    var inverseID: PropertyID? = nil
    if let inv = r.inverse {
      let destProps = flat[dest] ?? []
      guard let j = destProps.firstIndex(where: { $0.name == inv }) else {
        throw .unknownInverse(entity: d.name, relationship: r.name, inverse: inv)
      }
      guard let back = destProps[j].relationship else {
        throw .inverseMismatch(entity: d.name, relationship: r.name, inverse: inv, detail: "is an attribute")
      }
      guard back.inverse == r.name else {
        throw .inverseMismatch(
          entity: d.name, relationship: r.name, inverse: inv,
          detail: "does not name '\(r.name)' as its inverse")
      }
      // The inverse must point back at this entity or one of its ancestors.
      var ancestors: Set<String> = [d.name]
      var p = d.parent
      while let name = p {
        ancestors.insert(name)
        p = ids[name].flatMap { descriptions[$0].parent }
      }
      guard ancestors.contains(back.destination) else {
        throw .inverseMismatch(
          entity: d.name, relationship: r.name, inverse: inv,
          detail: "has destination '\(back.destination)', not '\(d.name)'")
      }
      inverseID = PropertyID(rawValue: UInt16(j))
    }
    return Relationship(
      id: id, name: r.name, destination: EntityID(rawValue: UInt16(dest)), isToMany: r.isToMany,
      isOrdered: r.isOrdered, isOptional: r.isOptional, minCount: r.minCount, maxCount: r.maxCount,
      inverse: inverseID, deleteRule: r.deleteRule, renamingIdentifier: r.renamingIdentifier,
      copyPolicy: r.copyPolicy, userInfo: r.userInfo)
  }

  static func checkName(_ name: String) throws(ModelError) {
    guard let first = name.unicodeScalars.first, !("0"..."9").contains(first),
      name.unicodeScalars.allSatisfy({ $0 == "_" || $0.properties.isAlphabetic || ("0"..."9").contains($0) })
    else { throw .invalidName(name) }
  }
}
