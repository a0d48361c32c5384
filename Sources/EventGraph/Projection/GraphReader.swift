internal import LMDB

/// Reads the projection through any open transaction: the shared read path of snapshots,
/// write transactions, replay and verify.
struct GraphReader<T: TransactionReading> {
  let txn: T
  let dbs: StoreDatabases
  let model: Model
  /// The count nodes of ordered lists that the projector reading through this has changed
  /// and not yet written (Projection/OrderedRanks.swift); `nil` for every other reader.
  let pending: PendingRanks?

  init(txn: T, dbs: StoreDatabases, model: Model, pending: PendingRanks? = nil) {
    self.txn = txn
    self.dbs = dbs
    self.model = model
    self.pending = pending
  }

  /// The entity an identity was created with, even if the object was deleted since.
  func entity(of o: ObjectID) throws -> EntityID? {
    try txn.withValue(dbs.identities, key: StoreKey.object(o)) { b in
      KeyField.u16(b, at: 0).map { EntityID(rawValue: $0) }
    } ?? nil
  }

  /// The live object's state; `nil` when it does not exist or was deleted.
  func object(_ o: ObjectID) throws -> ObjectState? {
    try txn.withValue(dbs.objects, key: StoreKey.object(o)) { b in
      try ObjectState.decode(b, id: o, model: model)
    }
  }

  /// The targets of a relationship, in order for an ordered one.
  func related(_ o: ObjectID, _ rel: PropertyID) throws -> [ObjectID] { try targets(o, LinkSlot(rel)) }

  /// The targets of the entries of one slot of `o`, in key order.
  func targets(_ o: ObjectID, _ slot: LinkSlot) throws -> [ObjectID] {
    var result: [ObjectID] = []
    try scanLinks(o, slot) { key, value in
      if let t = LinkEntry.target(key: key, value: value) { result.append(t) }
    }
    return result
  }

  /// The objects whose relationship `r` leads to `t`: `t`'s side of `r`'s inverse, or the
  /// reverse entries kept for a relationship without one.
  func referrers(of t: ObjectID, through r: Relationship) throws -> [ObjectID] {
    try targets(t, r.inverse.map(LinkSlot.init) ?? .reverse(of: r.id))
  }

  /// Whether `t` is a target of relationship `r` of `o`: one lookup.
  func hasLink(_ o: ObjectID, _ r: Relationship, _ t: ObjectID) throws -> Bool {
    if r.isOrdered { return try orderKey(o, LinkSlot(r.id), of: t) != nil }
    return try txn.withValue(dbs.links, key: StoreKey.link(o, LinkSlot(r.id), target: t)) { _ in true } ?? false
  }

  /// The number of targets of a relationship: one lookup for an ordered one.
  func relatedCount(_ o: ObjectID, _ r: Relationship) throws -> Int {
    if r.isOrdered { return try orderedCount(o, LinkSlot(r.id)) }
    var count = 0
    try scanLinks(o, LinkSlot(r.id)) { _, _ in count += 1 }
    return count
  }

  /// Calls `body` for each entry of `links` under (object, relationship).
  func scanLinks(
    _ o: ObjectID, _ rel: LinkSlot, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void
  )
    throws
  {
    let prefix = StoreKey.links(o, rel)
    try txn.forEach(dbs.links, from: prefix) { key, value in
      guard KeyField.hasPrefix(key, prefix) else { return false }
      try body(key, value)
      return true
    }
  }

  /// Every link entry of an object: (slot, target).
  func allLinks(_ o: ObjectID) throws -> [(slot: LinkSlot, target: ObjectID)] {
    var result: [(LinkSlot, ObjectID)] = []
    let prefix = StoreKey.object(o)
    try txn.forEach(dbs.links, from: prefix) { key, value in
      guard KeyField.hasPrefix(key, prefix), let slot = LinkEntry.slot(key) else { return false }
      if let t = LinkEntry.target(key: key, value: value) { result.append((slot, t)) }
      return true
    }
    return result
  }

  /// The live objects of exactly this entity (not its sub-entities), in identity order.
  func objects(ofExactly e: EntityID) throws -> [ObjectID] {
    var result: [ObjectID] = []
    let prefix = StoreKey.entityPrefix(e)
    try txn.forEach(dbs.entities, from: prefix) { key, _ in
      guard KeyField.hasPrefix(key, prefix), let o = KeyField.u64(key, at: 2) else { return false }
      result.append(ObjectID(o))
      return true
    }
    return result
  }

  /// The live objects of an entity and its sub-entities, in identity order.
  func objects(of e: EntityID) throws -> [ObjectID] {
    let kinds = model.descendants(of: e)
    if kinds.count == 1 { return try objects(ofExactly: e) }
    return try kinds.flatMap { try objects(ofExactly: $0) }.sorted()
  }

  /// The first sequences of the commits that touched an object, oldest first.
  func history(_ o: ObjectID) throws -> [UInt64] {
    var result: [UInt64] = []
    let prefix = StoreKey.object(o)
    try txn.forEach(dbs.history, from: prefix) { key, _ in
      guard KeyField.hasPrefix(key, prefix), let s = KeyField.u64(key, at: 8) else { return false }
      result.append(s)
      return true
    }
    return result
  }

  /// The commit that holds event `sequence`, decoded; `nil` beyond the log.
  func commit(containing sequence: UInt64) throws -> Commit? {
    return try txn.withCursor(dbs.log) { cursor in
      var found = try cursor.seek(StoreKey.sequence(sequence))
      if found {
        let exact = try cursor.withCurrent { k, _ in KeyField.u64(k, at: 0) == sequence }
        if !exact { found = try cursor.previous() }
      } else {
        found = try cursor.last()
      }
      guard found else { return nil }
      let commit = try cursor.withCurrent { k, v in
        try CommitCodec.decode(v, context: "log entry \(KeyField.u64(k, at: 0) ?? 0)")
      }
      return sequence <= commit.lastSequence ? commit : nil
    }
  }

  /// The last commit's number and last sequence (0, 0 for an empty log).
  func logEnd() throws -> (commit: UInt64, sequence: UInt64) {
    return try txn.withCursor(dbs.log) { cursor in
      guard try cursor.last() else { return (0, 0) }
      return try cursor.withCurrent { k, v in
        let h = try CommitCodec.decodeHeader(v, context: "log entry \(KeyField.u64(k, at: 0) ?? 0)")
        return (h.number, h.lastSequence)
      }
    }
  }

  /// The highest identity ever given (0 when none).
  func lastObjectID() throws -> UInt64 {
    return try txn.withCursor(dbs.identities) { cursor in
      guard try cursor.last() else { return 0 }
      return try cursor.withCurrent { k, _ in KeyField.u64(k, at: 0) ?? 0 }
    }
  }

  /// `Entity/N` for an object, or `#N` when its identity is unknown.
  func display(_ o: ObjectID) -> String { "\(objectName(o))" }

  /// An object as errors name it: its entity and identity.
  func objectName(_ o: ObjectID) -> StoreError.ObjectName {
    StoreError.ObjectName(entity: (try? entity(of: o)).flatMap { model.entity($0) }?.name, id: o)
  }
}
