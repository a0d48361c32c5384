import EventGraphModel

extension QueryChecker {
  /// Resolves a key path to property IDs, through relationships' destination entities.
  ///
  /// Aggregates come in Apple's form, `employees.@avg.salary`, or after the attribute,
  /// `employees.salary.@avg`; `@count` ends a to-many path (`employees.@count`).
  func keyPath(_ path: QueryKeyPath, at start: Int?) throws(QueryError) -> Checked {
    var root = PathRoot.object
    var entity = self.entity
    var isToMany = false
    if let name = path.variable {
      guard let type = variables[name] else {
        let hint = NameSuggestion.hint(for: name, among: Array(variables.keys))
        throw error(.unknownVariable, "unknown variable $\(name)\(hint)", at: start)
      }
      let offset = position(start)
      switch type.element {
      case .null, .attribute:
        guard path.components.isEmpty else {
          throw error(
            .typeMismatch, "$\(name) is declared as \(type), not an object: it has no properties",
            at: path.offset(ofComponent: 0) ?? start)
        }
        return type.isToMany
          ? .values(.variable(name, offset: offset), type.element)
          : .value(.variable(name, offset: offset), type.element)
      case .object(let id):
        guard let e = model.entity(id) else {
          throw error(
            .unknownProperty, "$\(name) is declared with entity #\(id.rawValue), which the model lacks", at: start)
        }
        root = .variable(name, offset: offset)
        entity = e
        isToMany = type.isToMany
      }
    }
    return try follow(path, from: root, entity: entity, isToMany: isToMany, at: start)
  }

  /// Resolves a key path's components from where it starts.
  func follow(_ path: QueryKeyPath, from root: PathRoot, entity: Entity, isToMany: Bool, at start: Int?)
    throws(QueryError) -> Checked
  {
    var entity = entity
    var isToMany = isToMany
    var steps: [ObjectStep] = []
    // The to-many relationship the last component followed, from what entity, and whether
    // the path was to-many before it: what `[FIRST]`, `[LAST]` and `[n]` pick from.
    var followed: (relationship: Relationship, from: Entity, wasToMany: Bool)? = nil
    var pending: (aggregate: QueryAggregate, offset: Int?)? = nil
    let components = path.components
    for (i, component) in components.enumerated() {
      let offset = path.offset(ofComponent: i) ?? start
      let justFollowed = followed
      followed = nil
      switch component {
      case .element(let index):
        try checkElement(index, after: justFollowed, pending: pending != nil, at: offset)
        steps.append(.element(index))
        isToMany = false
      case .property(let name):
        guard let property = entity.property(named: name) else {
          let hint = NameSuggestion.hint(for: name, among: entity.properties.map(\.name))
          throw error(
            .unknownProperty, "\(entity.name) has no attribute or relationship '\(name)'\(hint)", at: offset)
        }
        switch property.kind {
        case .relationship(let r):
          guard let destination = model.entity(r.destination) else {
            throw error(.unknownProperty, "\(entity.name).\(name) leads to an entity the model lacks", at: offset)
          }
          steps.append(.follow(r.id))
          followed = (r, entity, isToMany)
          isToMany = isToMany || r.isToMany
          entity = destination
        case .attribute(let a):
          let objects = ObjectsCode(root: root, steps: steps, isToMany: isToMany)
          let rest = components.dropFirst(i + 1)
          if let (aggregate, aggregateOffset) = pending {
            guard rest.isEmpty else { throw afterAttribute(a, entity, at: path.offset(ofComponent: i + 1) ?? start) }
            return try self.aggregate(aggregate, .attributeOf(objects, a.id), a, at: aggregateOffset)
          }
          if rest.isEmpty {
            if isToMany { return .values(.attributeOf(objects, a.id), .attribute(a.type)) }
            if steps.isEmpty, case .object = root { return .value(.attribute(a.id), .attribute(a.type)) }
            return .value(.attributeOf(objects, a.id), .attribute(a.type))
          }
          let nextOffset = path.offset(ofComponent: i + 1) ?? start
          // `name.length`: Foundation answers NSString's length (UTF-16 code units), and
          // NSData's (bytes).
          if rest.count == 1, case .property("length") = rest.first, pending == nil, !isToMany,
            a.type.isText || a.type == .binary
          {
            let value: ValueCode =
              if steps.isEmpty, case .object = root { .attribute(a.id) } else { .attributeOf(objects, a.id) }
            return .value(.function(.utf16length, [value], offset: position(nextOffset)), .attribute(.int64))
          }
          guard rest.count == 1, case .aggregate(let aggregate) = rest.first else {
            throw afterAttribute(a, entity, at: nextOffset)
          }
          guard isToMany else { throw toOneAggregate(aggregate, at: nextOffset) }
          return try self.aggregate(aggregate, .attributeOf(objects, a.id), a, at: nextOffset)
        }
      case .aggregate(let aggregate):
        guard pending == nil else {
          throw error(.invalidAggregate, "one key path takes one aggregate", at: offset)
        }
        guard isToMany else { throw toOneAggregate(aggregate, at: offset) }
        if aggregate == .count {
          guard i == components.count - 1 else {
            throw error(.invalidAggregate, "@count ends a key path", at: path.offset(ofComponent: i + 1) ?? start)
          }
          return .value(.countObjects(ObjectsCode(root: root, steps: steps, isToMany: true)), .attribute(.int64))
        }
        pending = (aggregate, offset)
      }
    }
    if let (aggregate, offset) = pending {
      throw error(
        .invalidAggregate,
        "@\(aggregate.rawValue) needs an attribute after it, as in employees.@\(aggregate.rawValue).salary",
        at: offset)
    }
    return .objects(ObjectsCode(root: root, steps: steps, isToMany: isToMany), entity.id)
  }

  /// Refuses `[FIRST]`, `[LAST]`, `[n]` anywhere but right after an ordered to-many
  /// relationship reached through to-one steps.
  private func checkElement(
    _ index: QueryElementIndex, after followed: (relationship: Relationship, from: Entity, wasToMany: Bool)?,
    pending: Bool, at offset: Int?
  ) throws(QueryError) {
    let written =
      switch index {
      case .first: "[FIRST]"
      case .last: "[LAST]"
      case .at(let n): "[\(n)]"
      }
    guard let (r, from, wasToMany) = followed, !pending else {
      throw error(
        .unknownProperty, "\(written) follows an ordered to-many relationship, as in employees\(written)", at: offset)
    }
    guard r.isToMany else {
      throw error(
        .unknownProperty, "\(from.name).\(r.name) is to-one: \(written) needs an ordered to-many relationship",
        at: offset)
    }
    guard r.isOrdered else {
      throw error(
        .unknownProperty,
        "\(from.name).\(r.name) is unordered: \(written) needs an ordered to-many relationship "
          + "(Foundation's answer on a set is undefined)", at: offset)
    }
    guard !wasToMany else {
      throw error(
        .unknownProperty,
        "\(written) picks from one object's \(r.name); the key path before \(from.name).\(r.name) is already to-many",
        at: offset)
    }
  }

  private func afterAttribute(_ a: Attribute, _ entity: Entity, at offset: Int?) -> QueryError {
    error(.unknownProperty, "\(entity.name).\(a.name) is an attribute: nothing follows it but an aggregate", at: offset)
  }

  private func toOneAggregate(_ aggregate: QueryAggregate, at offset: Int?) -> QueryError {
    error(
      .invalidAggregate,
      "@\(aggregate.rawValue) needs a to-many key path before it, as in employees.@\(aggregate.rawValue)",
      at: offset)
  }

  /// `@count`, `@sum`, `@avg`, `@min`, `@max` of an attribute over a to-many path.
  private func aggregate(_ aggregate: QueryAggregate, _ values: ManyCode, _ a: Attribute, at offset: Int?)
    throws(QueryError) -> Checked
  {
    let result: AttributeType
    switch aggregate {
    case .count:
      return .value(.countValues(values), .attribute(.int64))
    case .sum, .avg:
      guard a.type.isNumeric else {
        throw error(
          .invalidAggregate, "@\(aggregate.rawValue) needs a numeric attribute; \(a.name) is \(a.type.rawValue)",
          at: offset)
      }
      result = a.type == .decimal ? .decimal : aggregate == .avg ? .double : Self.promoted(a.type)
    case .min, .max:
      guard a.type.isNumeric || a.type == .date else {
        throw error(
          .invalidAggregate,
          "@\(aggregate.rawValue) needs a numeric or date attribute; \(a.name) is \(a.type.rawValue)",
          at: offset)
      }
      result = a.type
    }
    return .value(.aggregate(aggregate, values, a.type, offset: position(offset)), .attribute(result))
  }
}
