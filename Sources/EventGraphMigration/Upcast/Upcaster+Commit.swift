import EventGraph
import LMDB

extension Upcaster {
  /// One LMDB transaction: source commits from the checkpoint until the batch is full or
  /// the log ends; at the end of the log, the switch to the destination version.
  ///
  /// - Returns: whether the source log was finished (and the store switched).
  func runBatch(_ batch: CommitBatch, into report: inout UpcastReport) throws -> Bool {
    let txn = batch.handle
    let meta = sourceDBs.meta
    guard let cp = try txn.get(meta, key: keys.checkpoint),
      let checkpoint = BigEndianKey.decode(cp),
      let nx = try txn.get(meta, key: keys.nextID), var nextID = BigEndianKey.decode(nx)
    else { throw MigrationError("the upcast's checkpoint is missing") }
    // Another writer may have added source objects since the upcast started (it writes
    // batch by batch): their identities may be given already.
    guard let b = try txn.get(meta, key: keys.base), let base = BigEndianKey.decode(b),
      try GraphReader(txn: txn, dbs: sourceDBs, model: first.sourceModel).lastObjectID() < base
    else { throw SourceIdentitiesOverlap() }
    // The first step's source state lives for the batch (it applies the source events); a
    // later step reads what the step before it wrote, fresh for every commit.
    let sourceProjector = Projector(txn: txn, dbs: stages[0].source, model: first.sourceModel)
    var done = true
    var last = checkpoint
    var events = 0
    var commits: [Commit] = []
    try txn.forEach(sourceDBs.log, from: BigEndianKey(checkpoint + 1)) { k, v in
      let key = KeyField.u64(k, at: 0) ?? 0
      guard events < batchEvents else {
        done = false
        return false
      }
      let c = try CommitCodec.decode(v, context: "source log entry \(key)")
      commits.append(c)
      events += c.events.count
      return true
    }
    let associations = stages.map {
      Associations(
        txn: txn, forward: $0.forward, reverse: $0.reverse,
        keepsReverse: $0.mapping.mappings.contains { $0.policy != nil })
    }
    for c in commits {
      var input = c.events
      for (i, stage) in stages.enumerated() {
        let projector =
          i == 0 ? sourceProjector : Projector(txn: txn, dbs: stage.source, model: stage.mapping.sourceModel)
        associations[i].forgetRemembered()
        let (written, output) = try migrate(
          c, events: input, stage: stage, sourceProjector: projector, applySource: i == 0,
          associations: associations[i], batch: batch, nextID: &nextID)
        input = output
        if stage.isFinal, let written {
          report.commitsWritten += 1
          report.eventsWritten += Int(written.lastSequence - written.firstSequence + 1)
        }
      }
      report.commitsRead += 1
      report.eventsRead += c.events.count
      last = c.lastSequence
    }
    try sourceProjector.writeObjects()
    try txn.put(meta, key: keys.checkpoint, value: BigEndianKey(last))
    try txn.put(meta, key: keys.nextID, value: BigEndianKey(nextID))
    if done {
      // The atomic switch: the destination version becomes the store's, in this same
      // transaction; the scratch state goes, the source log stays for a rollback.
      try txn.put(meta, key: MetaKey.activeVersion, value: String(self.last.destinationModel.version))
      try txn.put(meta, key: keys.from, value: String(first.sourceModel.version))
      try txn.put(meta, key: keys.sourceEnd, value: BigEndianKey(last))
      for k in [keys.checkpoint, keys.nextID, keys.fingerprint, keys.base] { try txn.delete(meta, key: k) }
      for (_, db) in stages[0].source.projections { try txn.empty(db) }
      for stage in stages {
        if !stage.isFinal {
          for (_, db) in stage.output.projections { try txn.empty(db) }
          try txn.empty(stage.output.log)
        }
        try txn.empty(stage.forward)
        try txn.empty(stage.reverse)
      }
    }
    return done
  }

  /// Migrates one source commit's events through one step into one destination commit
  /// (written to the log by the last step only; none when nothing changed).
  ///
  /// - Returns: the commit written, and the destination events (the next step's input).
  private func migrate(
    _ c: Commit, events: [Event], stage: Stage, sourceProjector: Projector, applySource: Bool,
    associations: Associations, batch: CommitBatch, nextID: inout UInt64
  ) throws -> (CommitInfo?, [Event]) {
    let mapping = stage.mapping
    // 1. The source state after the commit, and the objects whose mapping may change.
    var named: [ObjectID] = []
    named.reserveCapacity(events.count)
    for e in events {
      if applySource { try sourceProjector.apply(e) }
      if named.last != e.object { named.append(e.object) }
      if case .link(_, _, let t, _) = e { named.append(t) }
      if case .unlink(_, _, let t) = e { named.append(t) }
    }
    if applySource { sourceProjector.forgetTouched() }
    let affected =
      mapping.reach == 0
      ? Self.sortedUnique(named) : try expand(Set(named), hops: mapping.reach, reader: sourceProjector.reader).sorted()
    var changes = CommitChanges(events)

    // 2. One destination transaction, with the source commit's time and metadata.
    var metadata = c.metadata
    metadata.sourceCommit = c.firstSequence
    let destination = batch.writing(to: stage.output, model: mapping.destinationModel)
    let tx = destination.transaction(metadata: metadata)
    defer { tx.close() }
    let graph = SourceGraph(projector: sourceProjector)
    let context = UpcastContext(
      source: graph, associations: associations, sourceModel: mapping.sourceModel, destination: tx)
    let manager = MigrationManager(context: context, mapping: mapping)
    let active = mapping.mappings.filter { $0.source != nil && $0.destination != nil }
    func policy(_ m: CompiledEntityMapping) -> any MigrationPolicy { m.policy ?? DefaultPolicy() }
    func step<T>(_ name: String, _ m: CompiledEntityMapping, _ object: ObjectID? = nil, _ body: () throws -> T) throws
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

    for m in active { try step("begin", m) { try policy(m).begin(m, manager: manager) } }
    // 3. Destination instances: what each affected source makes now, against what it made before.
    for m in active {
      let inputs = stage.inputs[m.index]
      // A mapping whose filter and values read none of what the commit changed makes what
      // it made before: nothing to compare.
      for s in affected where changes.mayChangeInstances(inputs, of: s) {
        let current = try graph.state(s)
        guard let state = try current ?? deletedEntity(s, sourceProjector), mapping.applies(m, to: state.entity)
        else { continue }
        let source = SourceObject(id: s, entity: state.entity)
        manager.drafts = []
        manager.draftSource = source
        let alive = current != nil
        if alive {
          let passes =
            try m.filter.map { try $0.evaluate(s, in: context.source, variables: manager.variables(source: s)) } ?? true
          if passes {
            try step("createDestinationInstances", m, s) {
              try policy(m).createDestinationInstances(for: source, mapping: m, manager: manager)
            }
          }
        }
        manager.draftSource = nil
        try step("reconcile", m, s) {
          try reconcile(
            m, source, manager.drafts, tx: tx, associations: associations, changes: &changes, nextID: &nextID)
        }
      }
    }
    for m in active { try step("endInstanceCreation", m) { try policy(m).endInstanceCreation(m, manager: manager) } }
    // 4. Relationships of the destination objects of the affected sources.
    for m in active {
      // A mapping with no relationship mappings and no policy has nothing to do here.
      guard !m.relationships.isEmpty || m.policy != nil else { continue }
      let inputs = stage.inputs[m.index]
      for s in affected where changes.mayChangeRelationships(m, inputs, of: s) {
        guard let state = try graph.state(s), mapping.applies(m, to: state.entity) else { continue }
        for (_, d) in try associations.destinations(mapping: m.index, source: s)
        where try tx.liveEntityID(of: d) != nil {
          manager.relationshipSource = (d, s)
          defer { manager.relationshipSource = nil }
          try step("createRelationships", m, s) {
            try policy(m).createRelationships(for: d, mapping: m, manager: manager)
          }
        }
      }
    }
    for m in active {
      try step("endRelationshipCreation", m) { try policy(m).endRelationshipCreation(m, manager: manager) }
    }
    for m in active {
      try step("performCustomValidation", m) { try policy(m).performCustomValidation(m, manager: manager) }
    }
    for m in active { try step("end", m) { try policy(m).end(m, manager: manager) } }
    do {
      return (try destination.commit(tx, time: c.time, log: stage.isFinal), tx.events)
    } catch {
      throw MigrationError(
        "source commit \(c.number) (sequence \(c.firstSequence)): the destination commit is invalid: \(error)")
    }
  }

  /// The entity a deleted source object had (its destinations must go too).
  private func deletedEntity(_ s: ObjectID, _ p: Projector) throws -> ObjectState? {
    guard let e = try p.reader.entity(of: s) else { return nil }
    return ObjectState.placeholder(id: s, entity: e)
  }

  /// The identities in order, each once.
  private static func sortedUnique(_ ids: [ObjectID]) -> [ObjectID] {
    var result: [ObjectID] = []
    result.reserveCapacity(ids.count)
    for id in ids.sorted() where result.last != id { result.append(id) }
    return result
  }

  /// The objects within `hops` links of `start`, `start` included.
  private func expand(_ start: Set<ObjectID>, hops: Int, reader: GraphReader<WriteHandle>) throws -> Set<ObjectID> {
    var all = start
    var frontier = start
    for _ in 0..<hops {
      var next: Set<ObjectID> = []
      for o in frontier {
        for (_, t) in try reader.allLinks(o) where !all.contains(t) { next.insert(t) }
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
    associations: Associations, changes: inout CommitChanges, nextID: inout UInt64
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
        id = ObjectID(nextID)
        nextID += 1
      }
      let d = try tx.insert(draft.entity, values: draft.values, identity: id)
      try associations.add(mapping: m.index, source: s.id, key: draft.key, destination: d)
      changes.associationsChanged.insert(pair)
    }
  }
}
