extension Snapshot {
  /// The record of a live object; `nil` when it does not exist or is not of the record's
  /// entity (or a sub-entity).
  ///
  /// - Throws: ``RecordError`` when the record type does not fit the model (at its first
  ///   use) or a stored value does not fit the record (a `nil` for a non-optional).
  public func record<R: Record>(_ id: Ref<R>) throws -> Stored<R>? {
    try record(R.self, id.id)
  }

  /// The record of an object as a commit left it: after event `sequence`, the last event
  /// of a commit (``CommitInfo/lastSequence``, ``lastSequence(ofCommit:)``), rebuilt from the
  /// object's own history as ``object(_:asOf:)`` rebuilds it, with its version then (the
  /// first sequence of the last commit up to `sequence` that touched it); `nil` when it did
  /// not exist then or was not of the record's entity.
  ///
  /// ```swift
  /// let before = try snapshot.record(order, asOf: commit.firstSequence - 1)
  /// ```
  ///
  /// - Throws: ``ErrorCode/sequenceInsideCommit`` for an event inside a commit (a state
  ///   no commit left, where a required value may not be set yet),
  ///   ``ErrorCode/sequenceBeyondLog`` past the log's end; ``RecordError`` as ``record(_:)``
  ///   does (a value the record cannot hold).
  public func record<R: Record>(_ id: Ref<R>, asOf sequence: UInt64) throws -> Stored<R>? {
    _ = try commitEnd(at: sequence)
    let schema = try RecordSchema.of(R.self, in: model)
    guard let past = try object(id, asOf: sequence), model.isKind(past.state.entity, of: schema.entity.id) else {
      return nil
    }
    let version = try history(of: id).last { $0 <= sequence } ?? 0
    return try Self.decodeRecord(past.state, schema: schema, version: version) { _, r in past.relationships[r] ?? [] }
  }

  /// ``record(_:)`` by an untyped identity.
  public func record<R: Record>(_ type: R.Type, _ id: ObjectID) throws -> Stored<R>? {
    try readRecord(id, as: R.self) { try version(of: $0) }
  }

  /// The records of the live objects of `R`'s entity (sub-entities included) for which
  /// `predicate` holds, sorted, then `offset` skipped and at most `limit` kept: the fetch
  /// of ``fetch(_:where:variables:sortedBy:limit:offset:)``, decoded.
  ///
  /// ```swift
  /// let adults = try snapshot.fetch(Person.self, where: "age >= 18", sortedBy: [.init("name")], limit: 10)
  /// ```
  ///
  /// - Throws: ``RecordError`` when the record type does not fit the model, before any
  ///   object is read; the errors of the dynamic fetch.
  public func fetch<R: Record>(
    _ type: R.Type, where predicate: String? = nil, variables: [String: Value] = [:],
    sortedBy sort: [SortDescriptor] = [], limit: Int? = nil, offset: Int = 0
  ) throws -> [Stored<R>] {
    let schema = try RecordSchema.of(R.self, in: model)
    if sort.isEmpty {
      return try fetchInIdentityOrder(
        R.self, schema: schema, where: predicate, variables: variables, limit: limit, offset: offset)
    }
    let found = try fetch(
      schema.entity, where: predicate, variables: variables, sortedBy: sort, limit: limit, offset: offset,
      keepingStates: true)
    let versions = try reader.versions(of: found.objects)
    // One closure for the whole fetch, not one per record.
    let related: (ObjectID, PropertyID) throws -> [ObjectID] = { [reader] in try reader.related($0, $1) }
    return try found.states.indices.map { i in
      try Self.decodeRecord(found.states[i], schema: schema, version: versions[i], related: related)
    }
  }
}

extension Snapshot {
  /// A fetch with no sort, each record decoded as its object matches.
  ///
  /// The page is the matches in identity order, so each record is decoded as its object is
  /// matched (its state read once and dropped, its version read with one cursor for the
  /// whole fetch), and the fetch stops once `offset + limit` match.
  /// Nothing is kept per object but the record, where the sorted fetch keeps every matching
  /// object's state until the page is known.
  private func fetchInIdentityOrder<R: Record>(
    _ type: R.Type, schema: RecordSchema, where predicate: String?, variables: [String: Value], limit: Int?,
    offset: Int
  ) throws -> [Stored<R>] {
    let plan = try FetchPlan(schema.entity, where: predicate, variables: variables, in: self)
    let wanted = limit.map { max(0, $0) } ?? Int.max
    var skip = max(0, offset)
    var records: [Stored<R>] = []
    guard wanted > 0 else { return records }
    let related: (ObjectID, PropertyID) throws -> [ObjectID] = { [reader] in try reader.related($0, $1) }
    try reader.txn.withCursor(reader.dbs.history) { versions in
      let candidates = try plan.candidates()
      // Room for every candidate at once: a growing array of a generic element copies its
      // records through their value witnesses at each doubling.
      records.reserveCapacity(min(wanted, candidates.count))
      for o in candidates {
        guard let state = try plan.matchingState(o) else { continue }
        if skip > 0 {
          skip -= 1
          continue
        }
        // Written out rather than through `decodeRecord`: in this one loop the generic
        // metadata of `Stored<R>` and `Ref<R>` is looked up once, not once a record.
        let values = RecordValues(
          reader: RecordReader(schema: schema, state: state, related: related, recordType: R.self))
        let record = try R(reading: values)
        records.append(Stored(id: Ref(o), version: try reader.version(of: o, versions), record: record))
        if records.count == wanted { break }
      }
    }
    return records
  }
}

extension EventStore {
  /// ``Snapshot/record(_:)`` in its own snapshot.
  public func record<R: Record>(_ id: Ref<R>) throws -> Stored<R>? {
    try read { try $0.record(id) }
  }

  /// ``Snapshot/fetch(_:where:variables:sortedBy:limit:offset:)->[Stored<R>]`` of records in its
  /// own snapshot.
  public func fetch<R: Record>(
    _ type: R.Type, where predicate: String? = nil, variables: [String: Value] = [:],
    sortedBy sort: [SortDescriptor] = [], limit: Int? = nil, offset: Int = 0
  ) throws -> [Stored<R>] {
    try read {
      try $0.fetch(type, where: predicate, variables: variables, sortedBy: sort, limit: limit, offset: offset)
    }
  }
}
