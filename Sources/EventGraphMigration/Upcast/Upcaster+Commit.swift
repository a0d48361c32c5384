import EventGraph

extension Upcaster {
  /// Migrates one source commit's events through one step into one destination commit
  /// (written to the log by the last step only; none when nothing changed); the step keeps
  /// the destination events, the next step's input.
  func migrate(_ step: UpcastStep) throws {
    let mapping = stages[step.index].mapping
    let inputs = stages[step.index].inputs
    let c = step.commit
    let events = step.events
    // 1. The objects whose mapping may change (the source state is after the commit).
    var named: [ObjectID] = []
    named.reserveCapacity(events.count)
    for e in events {
      if named.last != e.object { named.append(e.object) }
      if case .link(_, _, let t, _) = e { named.append(t) }
      if case .unlink(_, _, let t) = e { named.append(t) }
    }
    let graph = step.source
    let affected =
      mapping.reach == 0
      ? Self.sortedUnique(named) : try expand(Set(named), hops: mapping.reach, source: graph).sorted()
    var changes = CommitChanges(events)

    // 2. One destination transaction, with the source commit's time and metadata.
    var metadata = c.metadata
    metadata.sourceCommit = c.firstSequence
    // The upcast of a truncated log's base is the new log's first commit, an ordinary one:
    // the new log starts there, its own history complete (Docs/retention.md).
    metadata.base = nil
    let tx = step.destination(metadata: metadata)
    let associations = step.associations
    let context = UpcastContext(
      source: graph, associations: associations, sourceModel: mapping.sourceModel, destination: tx)
    let manager = MigrationManager(context: context, mapping: mapping)
    let active = mapping.mappings.filter { $0.source != nil && $0.destination != nil }
    func policy(_ m: CompiledEntityMapping) -> any MigrationPolicy { m.policy ?? DefaultPolicy() }
    func call<T>(_ name: String, _ m: CompiledEntityMapping, _ object: ObjectID? = nil, _ body: () throws -> T) throws
      -> T
    {
      onStage?("\(name) \(m.name)")
      do {
        return try body()
      } catch {
        let on = object.map { " on #\($0.rawValue)" } ?? ""
        throw MigrationError(
          "source commit \(c.number) (sequence \(c.firstSequence)), mapping \(m.name), \(name)\(on): \(error)")
      }
    }

    for m in active { try call("begin", m) { try policy(m).begin(m, manager: manager) } }
    // 3. Destination instances: what each affected source makes now, against what it made before.
    for m in active {
      let inputs = inputs[m.index]
      // A mapping whose filter and values read none of what the commit changed makes what
      // it made before: nothing to compare.
      for s in affected where changes.mayChangeInstances(inputs, of: s) {
        let current = try graph.state(s)
        // A deleted source's entity too: its destinations must go.
        guard let entity = try current?.entity ?? graph.entity(everOf: s), mapping.applies(m, to: entity)
        else { continue }
        let source = SourceObject(id: s, entity: entity)
        manager.drafts = []
        manager.draftSource = source
        let alive = current != nil
        if alive {
          let passes =
            try m.filter.map { try $0.evaluate(s, in: context.source, variables: manager.variables(source: s)) } ?? true
          if passes {
            try call("createDestinationInstances", m, s) {
              try policy(m).createDestinationInstances(for: source, mapping: m, manager: manager)
            }
          }
        }
        manager.draftSource = nil
        try call("reconcile", m, s) {
          try reconcile(
            m, source, manager.drafts, tx: tx, associations: associations, changes: &changes, step: step)
        }
      }
    }
    for m in active { try call("endInstanceCreation", m) { try policy(m).endInstanceCreation(m, manager: manager) } }
    // 4. Relationships of the destination objects of the affected sources.
    for m in active {
      // A mapping with no relationship mappings and no policy has nothing to do here.
      guard !m.relationships.isEmpty || m.policy != nil else { continue }
      let inputs = inputs[m.index]
      for s in affected where changes.mayChangeRelationships(m, inputs, of: s) {
        guard let state = try graph.state(s), mapping.applies(m, to: state.entity) else { continue }
        for (_, d) in try associations.destinations(mapping: m.index, source: s)
        where try tx.liveEntityID(of: d) != nil {
          manager.relationshipSource = (d, s)
          defer { manager.relationshipSource = nil }
          try call("createRelationships", m, s) {
            try policy(m).createRelationships(for: d, mapping: m, manager: manager)
          }
        }
      }
    }
    for m in active {
      try call("endRelationshipCreation", m) { try policy(m).endRelationshipCreation(m, manager: manager) }
    }
    // 5. Erasures pass through: the subject's key is the store's, destroyed already; the
    // event makes the new version's log say so and its indexes drop the subject's hashes.
    for case .erase(let subject, let reason) in events { try tx.carryErasure(subject, reason: reason) }
    for m in active {
      try call("performCustomValidation", m) { try policy(m).performCustomValidation(m, manager: manager) }
    }
    for m in active { try call("end", m) { try policy(m).end(m, manager: manager) } }
    do {
      try step.finish(tx)
    } catch {
      throw MigrationError(
        "source commit \(c.number) (sequence \(c.firstSequence)): the destination commit is invalid: \(error)")
    }
  }

  /// The identities in order, each once.
  private static func sortedUnique(_ ids: [ObjectID]) -> [ObjectID] {
    var result: [ObjectID] = []
    result.reserveCapacity(ids.count)
    for id in ids.sorted() where result.last != id { result.append(id) }
    return result
  }

  /// The objects within `hops` links of `start`, `start` included.
  private func expand(_ start: Set<ObjectID>, hops: Int, source: SourceGraph) throws -> Set<ObjectID> {
    var all = start
    var frontier = start
    for _ in 0..<hops {
      var next: Set<ObjectID> = []
      for o in frontier {
        for t in try source.links(of: o) where !all.contains(t) { next.insert(t) }
      }
      if next.isEmpty { break }
      all.formUnion(next)
      frontier = next
    }
    return all
  }

  /// Whether a source's identity may be given to its one-to-one destination: never given,
  /// or given to this same destination object, deleted since.
  private static func identityIsFree(_ id: ObjectID, for entity: Entity, in tx: Transaction) throws -> Bool {
    guard let known = try tx.entityID(of: id) else { return true }
    return try known == entity.id && tx.liveEntityID(of: id) == nil
  }

  /// Writes the difference between what a source made before and what it makes now.
  private func reconcile(
    _ m: CompiledEntityMapping, _ s: SourceObject, _ drafts: [MigrationManager.Draft], tx: Transaction,
    associations: Associations, changes: inout CommitChanges, step: UpcastStep
  ) throws {
    let existing = try associations.destinations(mapping: m.index, source: s.id)
    let pair = MappingSource(mapping: m.index, source: s.id)
    // Few keys per source (one, or one per `instances` entry): a scan costs less than a set.
    let wanted = drafts.count <= 8 ? nil : Set(drafts.map(\.key))
    for (key, d) in existing where !(wanted?.contains(key) ?? drafts.contains { $0.key == key }) {
      // Without the destination model's delete rules: which objects exist is the mapping's
      // to say (each is reconciled by its own mapping), so a `cascade` must not delete
      // objects the mapping keeps, nor a `deny` refuse because links that this commit's
      // relationship stage will remove are still there.
      try tx.deleteIgnoringRules(d)
      try associations.remove(mapping: m.index, source: s.id, key: key, destination: d)
      changes.associationsChanged.insert(pair)
    }
    let made = existing.count <= 8 ? nil : Dictionary(existing, uniquingKeysWith: { a, _ in a })
    for draft in drafts {
      let before = made.map { $0[draft.key] } ?? existing.first { $0.0 == draft.key }?.1
      if let d = before, try tx.liveEntityID(of: d) != nil {
        for (a, v) in draft.values { try tx.set(d, attribute: a, v) }
        continue
      }
      if let stale = before {
        try associations.remove(mapping: m.index, source: s.id, key: draft.key, destination: stale)
      }
      // The one-object mapping keeps the source's identity (once: identities are never reused).
      let id: ObjectID
      // Free, or the same object's own identity, deleted when its source was filtered out:
      // it comes back as itself, as a whole-store migration would keep it.
      if m.keepsIdentity && draft.key.isEmpty, try Self.identityIsFree(s.id, for: draft.entity, in: tx) {
        id = s.id
      } else {
        id = step.nextIdentity()
      }
      let d = try tx.insert(draft.entity, values: draft.values, identity: id)
      try associations.add(mapping: m.index, source: s.id, key: draft.key, destination: d)
      changes.associationsChanged.insert(pair)
    }
  }
}
