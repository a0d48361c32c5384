import EventGraph

/// Completes and checks a mapping: inference for unnamed entities and unlisted
/// attributes and relationships, type checks, compiled expressions.
struct MappingBuilder {
  let source: Model
  let destination: Model
  let policies: PolicyRegistry
  let file: String
  /// Changes that cannot be inferred, gathered so that one error names every one of them.
  var refusals: [MappingError] = []
  /// The longest key path of any expression or predicate.
  private var longestPath = 0
  /// The longest key path of a relationship mapping's `sources`.
  private var longestSources = 0
  /// The longest key path of a filter or `when`: what decides whether an object exists.
  private var longestExistence = 0

  /// How far (in links) a change can be from an object whose mappings it affects.
  ///
  /// A relationship's targets are the objects another mapping made from objects `sources`
  /// away, and whether that mapping makes one depends on its filter, up to that much
  /// further away: the two add up.
  var reach: Int { max(longestPath, longestSources + longestExistence) }

  init(source: Model, destination: Model, policies: PolicyRegistry, file: String) {
    self.source = source
    self.destination = destination
    self.policies = policies
    self.file = file
  }

  func error(_ location: String, _ message: String) -> MappingError {
    MappingError(file: file, location: location, message: message)
  }

  mutating func build(_ mapping: MappingModel?) throws(MappingError) -> [CompiledEntityMapping] {
    if let mapping {
      guard mapping.source == source.version else {
        throw error(
          "source", "the mapping is from version \(mapping.source), the store is at version \(source.version)")
      }
      guard mapping.destination == destination.version else {
        throw error(
          "destination", "the mapping is to version \(mapping.destination), the model is version \(destination.version)"
        )
      }
    }
    guard destination.version > source.version else {
      throw error(
        "", "the destination model's version \(destination.version) is not greater than the store's \(source.version)")
    }
    var written = mapping?.entityMappings ?? []
    var seen = Set<String>()
    for m in written {
      guard seen.insert(m.name).inserted else { throw error(m.name, "mapping '\(m.name)' is declared twice") }
    }
    // Entity names first: an unknown one would otherwise surface as a confusing error in
    // another mapping's relationship that refers to this mapping.
    for m in written {
      if let n = m.source, source.entity(named: n) == nil {
        throw error("\(m.name).source", "source model has no entity '\(n)'")
      }
      if let n = m.destination, destination.entity(named: n) == nil {
        throw error("\(m.name).destination", "destination model has no entity '\(n)'")
      }
    }
    // Lightweight inference for source entities that no mapping names.
    let named = Set(written.compactMap(\.source))
    var inferred = Set<String>()
    for e in source.entities where !named.contains(e.name) && !e.isAbstract {
      guard let d = destinationEntity(for: e) else { continue }  // a removed entity
      var name = "\(e.name)To\(d.name)"
      while seen.contains(name) { name += "_" }
      seen.insert(name)
      inferred.insert(name)
      written.append(EntityMapping(name: name, source: e.name, destination: d.name))
    }
    if mapping == nil && written.isEmpty { try refuseDisjointModels() }
    let names = Dictionary(uniqueKeysWithValues: written.enumerated().map { ($1.name, $0) })
    // Which mapping keeps identities: the first one-object mapping of each source entity.
    var keeper: [String: Int] = [:]
    for (i, m) in written.enumerated()
    where m.source != nil && m.destination != nil && m.instances.isEmpty && m.policy == nil {
      if keeper[m.source ?? ""] == nil { keeper[m.source ?? ""] = i }
    }
    var result: [CompiledEntityMapping] = []
    for (i, m) in written.enumerated() {
      result.append(
        try compile(
          m, index: i, names: names, written: written, keeps: keeper[m.source ?? ""] == i,
          inferred: inferred.contains(m.name)))
    }
    if refusals.count == 1, let only = refusals.first { throw only }
    if !refusals.isEmpty {
      throw error(
        "",
        "\(refusals.count) changes need a mapping: "
          + refusals.map { "\($0.location): \($0.message)" }.joined(separator: "; "))
    }
    return result
  }

  /// Refuses a wholly inferred mapping that maps no source entity: the destination is most
  /// likely another model that happens to have a greater version, and the upcast would
  /// drop every object, leave an empty store and succeed.
  func refuseDisjointModels() throws(MappingError) {
    let kept = source.entities.filter { !$0.isAbstract }
    guard !kept.isEmpty else { return }
    throw error(
      "",
      "the model '\(destination.name)' v\(destination.version) shares no entity with the store's '\(source.name)' "
        + "v\(source.version) (the store has \(kept.map(\.name).joined(separator: ", ")); the model has "
        + "\(destination.entities.map(\.name).joined(separator: ", "))): an inferred mapping would drop every object. "
        + "Check that it is the model you meant, or write a mapping that says what becomes of them")
  }

  /// The destination entity a source entity maps to by inference: the same name, or a
  /// destination entity whose `renamingIdentifier` is the source's name.
  ///
  /// As in Core Data,
  /// a renaming identifier kept from an earlier rename matches the same identifier in the
  /// source (v2 `Volume` renamed from `Book` is v3 `Volume` renamed from `Book`).
  func destinationEntity(for e: Entity) -> Entity? {
    func renamed(_ d: Entity) -> Bool {
      guard let r = d.renamingIdentifier else { return false }
      return r == e.name || r == e.renamingIdentifier
    }
    return destination.entity(named: e.name).flatMap { $0.renamingIdentifier == nil || renamed($0) ? $0 : nil }
      ?? destination.entities.first(where: renamed)
  }

  /// The source property a destination property takes by default: same name or renaming identifier.
  func sourceProperty(for name: String, renaming: String?, in s: Entity) -> Property? {
    if let r = renaming, let p = s.property(named: r) { return p }
    return s.property(named: name)
  }

  private mutating func compile(
    _ m: EntityMapping, index: Int, names: [String: Int], written: [EntityMapping], keeps: Bool, inferred: Bool
  ) throws(MappingError) -> CompiledEntityMapping {
    let src = try m.source.map { (n: String) throws(MappingError) -> Entity in
      guard let e = source.entity(named: n) else {
        throw error("\(m.name).source", "source model has no entity '\(n)'")
      }
      return e
    }
    let dst = try m.destination.map { (n: String) throws(MappingError) -> Entity in
      guard let e = destination.entity(named: n) else {
        throw error("\(m.name).destination", "destination model has no entity '\(n)'")
      }
      return e
    }
    var policy: (any MigrationPolicy)? = nil
    if let p = m.policy {
      guard let registered = policies.policy(named: p) else {
        var e = error(
          "\(m.name).policy",
          policies.isEmpty
            ? "migration policy '\(p)' is not registered: no policies are"
            : "migration policy '\(p)' is not registered (registered: \(policies.names.joined(separator: ", ")))")
        if policies.isEmpty { e.remedy = .registerPolicies }
        throw e
      }
      policy = registered
    }
    guard let src, let dst else {
      return CompiledEntityMapping(
        index: index, name: m.name, source: src, destination: dst, filter: nil, attributes: [], instances: [],
        relationships: [], policy: policy, policyName: m.policy, keepsIdentity: false, isInferred: inferred)
    }
    let variables: [String: QueryType] = ["source": .object(src.id)]
    var filter: CompiledPredicate? = nil
    if let f = m.filter {
      filter = try predicate(f, src, variables, at: "\(m.name).filter")
      longestExistence = max(longestExistence, Self.hops(f))
    }
    var attributes: [(Attribute, CompiledExpression)] = []
    var instances: [(key: String, when: CompiledPredicate?, attributes: [(Attribute, CompiledExpression)])] = []
    if m.instances.isEmpty {
      // Without a policy, nothing but the mapping can give a required attribute its value.
      attributes = try attributeExpressions(m.attributes, src, dst, at: m.name, strict: m.policy == nil)
    } else {
      for (k, entry) in m.instances.enumerated() {
        var merged = m.attributes
        for (a, e) in entry.attributes { merged[a] = e }
        let when = try entry.when.map { (w: String) throws(MappingError) in
          longestExistence = max(longestExistence, Self.hops(w))
          return try predicate(w, src, variables, at: "\(m.name).instances[\(k)].when")
        }
        instances.append(
          (
            entry.key, when,
            try attributeExpressions(merged, src, dst, at: "\(m.name).instances[\(k)]", strict: m.policy == nil)
          ))
      }
    }
    var relationships: [(Relationship, target: Int, sources: CompiledExpression, perObject: Bool)] = []
    for r in dst.relationships {
      let location = "\(m.name).relationships.\(r.name)"
      if let given = m.relationships[r.name] {
        guard let target = names[given.mapping] else {
          throw error(location, "no entity mapping named '\(given.mapping)'")
        }
        guard let targetDestination = written[target].destination.flatMap({ destination.entity(named: $0) }),
          destination.isKind(targetDestination.id, of: r.destination)
        else {
          throw error(
            location,
            "mapping '\(given.mapping)' does not make \(destination.entity(r.destination)?.name ?? "?") objects")
        }
        let sources = try expression(given.sources, src, variables, at: "\(location).sources")
        // How far the targets are: `$source.a.b` and `a.b` follow two links (one more than the
        // hops that reach the last link), `$source` none.
        let bare = given.sources.filter { !$0.isWhitespace } == "$source"
        longestSources = max(longestSources, bare ? 0 : Self.hops(given.sources) + 1)
        guard case .object(let e) = sources.resultType.element,
          let targetSource = written[target].source.flatMap({ source.entity(named: $0) }),
          source.isKind(e, of: targetSource.id) || source.isKind(targetSource.id, of: e)
        else {
          throw error(
            "\(location).sources", "'\(given.sources)' does not give the objects mapping '\(given.mapping)' maps from")
        }
        if sources.resultType.isToMany && !r.isToMany {
          throw error("\(location).sources", "'\(given.sources)' gives a collection; \(dst.name).\(r.name) is to-one")
        }
        relationships.append((r, target, sources, false))
      } else if let sp = sourceProperty(for: r.name, renaming: r.renamingIdentifier, in: src),
        case .relationship(let sr) = sp.kind
      {
        // Inferred: the same relationship, its targets mapped by the one-object mapping of their entity.
        if sr.isToMany && !r.isToMany {
          throw error(
            location,
            "\(src.name).\(sp.name) is to-many and \(dst.name).\(r.name) is to-one: "
              + "a change that would drop links cannot be inferred and needs a relationship mapping")
        }
        let target = written.indices.first { j in
          guard let ts = written[j].source.flatMap({ source.entity(named: $0) }),
            let td = written[j].destination.flatMap({ destination.entity(named: $0) })
          else { return false }
          // A mapping of the relationship's destination entity, or of one of its sub-entities.
          return (source.isKind(sr.destination, of: ts.id) || source.isKind(ts.id, of: sr.destination))
            && destination.isKind(td.id, of: r.destination) && written[j].instances.isEmpty && written[j].policy == nil
        }
        guard let target else { continue }
        let sources = try expression("$source.\(sp.name)", src, variables, at: location)
        longestSources = max(longestSources, 1)
        relationships.append((r, target, sources, true))
      }
    }
    for key in m.relationships.keys where dst.relationship(named: key) == nil {
      throw error("\(m.name).relationships.\(key)", "\(dst.name) has no relationship '\(key)'")
    }
    return CompiledEntityMapping(
      index: index, name: m.name, source: src, destination: dst, filter: filter, attributes: attributes,
      instances: instances, relationships: relationships, policy: policy, policyName: m.policy, keepsIdentity: keeps,
      isInferred: inferred)
  }

  /// The value expression of every destination attribute: written, else the source's
  /// attribute of the same name (or renaming identifier), else the default.
  private mutating func attributeExpressions(
    _ given: [String: String], _ src: Entity, _ dst: Entity, at location: String, strict: Bool
  ) throws(MappingError) -> [(Attribute, CompiledExpression)] {
    for key in given.keys where dst.attribute(named: key) == nil {
      throw error("\(location).attributes.\(key)", "\(dst.name) has no attribute '\(key)'")
    }
    var result: [(Attribute, CompiledExpression)] = []
    for a in dst.attributes {
      let at = "\(location).attributes.\(a.name)"
      if let text = given[a.name] {
        let e = try expression(text, src, ["source": .object(src.id)], at: at)
        try checkAssignable(e, to: a, at: at)
        result.append((a, e))
      } else if a.isTransient {
        continue  // the store keeps no value for it: nothing is inferred
      } else if let sp = sourceProperty(for: a.name, renaming: a.renamingIdentifier, in: src),
        case .attribute(let sa) = sp.kind
      {
        guard Self.widens(sa.type, to: a.type) else {
          refusals.append(
            error(
              at,
              "\(src.name).\(sa.name) is \(sa.type.rawValue) and \(dst.name).\(a.name) is \(a.type.rawValue): a type change that cannot be inferred needs an expression"
            ))
          continue
        }
        result.append((a, try expression("$source.\(sp.name)", src, ["source": .object(src.id)], at: at)))
      } else if !a.isOptional && a.defaultValue == nil && strict {
        refusals.append(
          error(
            at, "\(dst.name).\(a.name) is required, has no default, and \(src.name) has no attribute to take it from"))
      }
    }
    return result
  }

  /// Whether a value of `from` converts to `to` without loss (lightweight migration's widening).
  static func widens(_ from: AttributeType, to: AttributeType) -> Bool {
    if from == to { return true }
    switch (from, to) {
    case (.int16, .int32), (.int16, .int64), (.int32, .int64), (.float, .double): return true
    case (.int16, .double), (.int32, .double), (.int16, .decimal), (.int32, .decimal), (.int64, .decimal): return true
    case (.string, .uri): return true
    default: return false
    }
  }

  private func checkAssignable(_ e: CompiledExpression, to a: Attribute, at location: String) throws(MappingError) {
    guard !e.resultType.isToMany else {
      throw error(location, "'\(e)' gives a collection; \(a.name) needs one value")
    }
    switch e.resultType.element {
    case .null: return
    case .object: throw error(location, "'\(e)' gives objects; \(a.name) is a \(a.type.rawValue) attribute")
    case .attribute(let t):
      let ok =
        t == a.type || (t.isNumeric && a.type.isNumeric) || (t == .string && a.type == .uri)
        || (t == .uri && a.type == .string)
      if !ok { throw error(location, "'\(e)' is \(t.rawValue); \(a.name) is \(a.type.rawValue)") }
    }
  }

  private mutating func predicate(_ text: String, _ e: Entity, _ variables: [String: QueryType], at location: String)
    throws(MappingError) -> CompiledPredicate
  {
    note(text)
    do {
      return try CompiledPredicate.compile(text, entity: e.id, model: source, variables: variables)
    } catch {
      throw self.error(location, "'\(text)': \(error)")
    }
  }

  private mutating func expression(_ text: String, _ e: Entity, _ variables: [String: QueryType], at location: String)
    throws(MappingError) -> CompiledExpression
  {
    note(text)
    do {
      return try CompiledExpression.compile(text, entity: e.id, model: source, variables: variables)
    } catch {
      throw self.error(location, "'\(text)': \(error)")
    }
  }

  private mutating func note(_ text: String) { longestPath = max(longestPath, Self.hops(text)) }

  /// The largest number of relationship hops any key path of an expression may take: how
  /// far a change can travel.
  ///
  /// Counted from the text, conservatively: each dot is a hop,
  /// except the one after `$source` (the source object itself).
  static func hops(_ text: String) -> Int {
    var longest = 0
    var dots = 0
    var startsWithVariable = false
    var inChain = false
    func close() {
      longest = max(longest, dots - (startsWithVariable && dots > 0 ? 1 : 0))
      dots = 0
      inChain = false
      startsWithVariable = false
    }
    for c in text {
      if c == "." {
        dots += 1
      } else if c.isLetter || c.isNumber || c == "_" || c == "@" || c == "$" {
        if !inChain {
          inChain = true
          startsWithVariable = c == "$"
        }
      } else {
        close()
      }
    }
    close()
    return longest
  }
}
