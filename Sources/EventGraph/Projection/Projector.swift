internal import LMDB

/// Applies events to the projection databases inside one write transaction.
///
/// The same code serves a live commit and a replay (rebuild, verify), which is what makes a
/// rebuilt projection identical to the one kept by commits. Events are applied strictly:
/// one that does not fit the current state (a set on a missing object, a link to a full
/// to-one) is a ``ErrorCode/corrupt`` during replay; the write API never emits one.
///
/// Object records are cached for the commit and written once by ``flush(commitSequence:)``.
final class Projector {
  let txn: WriteHandle
  let dbs: StoreDatabases
  let model: Model
  /// Reads the projection with the count nodes not yet written (made once: each read and
  /// write of a commit goes through it).
  let reader: GraphReader<WriteHandle>

  /// Objects loaded or changed in this commit.
  private var cache: [ObjectID: Cached] = [:]
  /// The object being changed now, authoritative over `cache` (and changed, so written by
  /// ``writeObjects()``): runs of events on one object (an insert and its sets) change it in
  /// place, with no hashing per event.
  private var hot: ProjectedObject?
  /// Objects whose history gets this commit, in the order they were touched, an object
  /// again only when another came between (``sortedTouched()`` sorts and dedupes them):
  /// appending costs less than hashing into a set, event after event.
  private var touched: [ObjectID] = []
  /// Objects inserted with a fresh identity since the last commit ended, in the order of
  /// their inserts: they have no uniqueness entries yet (``keepUniqueness()`` reads none).
  private(set) var insertedInCommit: [ObjectID] = []
  /// The uniqueness keys objects hold as the last commit left them, for objects whose
  /// records `objects` does not hold yet (a replay writes records once a batch); emptied
  /// when the records are written (Projector+Uniqueness.swift).
  var uniqueKeys: [ObjectID: UniquenessIndex.Keys] = [:]
  /// The uniqueness keys that objects deleted in this commit held before it.
  var deletedKeys: [ObjectID: UniquenessIndex.Keys] = [:]
  /// The ordered lists appended to in this commit, with their length and last order key.
  ///
  /// A run of appends to one list (an import, a replay) reads neither again. Dropped with
  /// the records, at the same points.
  private var listEnds: [ListName: (count: Int, last: UInt64)] = [:]
  /// The buffer object records are encoded into, one after another.
  private var record = BinaryWriter(capacity: 1024)
  /// The highest identity given before this projector's first insert (read then).
  ///
  /// Objects above it were inserted here: none of their keys existed before, and theirs
  /// usually sort after every other key of `objects` and `history`, so they are written as
  /// appends (``LMDB/TransactionWriting/appendOrPut(_:key:value:flags:)``).
  private var lastIdentityBefore: UInt64?
  /// Whether inserts still find their `entities` key at the end (one entity, or the last
  /// one, inserted in identity order); cleared at the first that does not.
  private var entitiesAppend = true
  /// While a base is replayed: its order keys not yet used, each member of an ordered list
  /// taking the next (``HistoryBase/orderKeys``).
  var baseOrderKeys: IndexingIterator<[UInt64]>?

  /// An object's record as of the events applied so far, and whether they changed it.
  private struct Cached {
    /// `nil` for an object that does not exist (deleted in this commit, or never made).
    var record: ProjectedObject?
    /// Whether ``writeObjects()`` writes the record (a deleted object's is deleted at once).
    var isChanged: Bool
  }

  init(txn: WriteHandle, dbs: StoreDatabases, model: Model) {
    self.txn = txn
    self.dbs = dbs
    self.model = model
    // The count nodes of long ordered lists changed since the object records were last
    // written.
    reader = GraphReader(txn: txn, dbs: dbs, model: model, pending: PendingRanks())
  }

  /// Makes room in the commit's cache for the objects of `events` more events, so that a
  /// long commit (a list of a hundred thousand links) grows it once rather than by doublings.
  func expect(events: Int) {
    cache.reserveCapacity(cache.count + events)
  }

  // MARK: - State as of the events applied so far

  /// The live object's whole state, decoded (and kept decoded for the rest of the commit).
  func state(_ o: ObjectID) throws -> ObjectState? {
    if let h = hot, h.id == o { return try h.state() }
    if let i = cache.index(forKey: o) { return try cache.values[i].record?.state() }
    // Decoded at once: reading the record as it stands first would walk it twice.
    let s = try reader.object(o)
    cache[o] = Cached(record: s.map { ProjectedObject($0) }, isChanged: false)
    return s
  }

  /// The live object's record, its values decoded only as they are asked for.
  func record(_ o: ObjectID) throws -> ProjectedObject? {
    if let h = hot, h.id == o { return h }
    if let cached = cache[o] { return cached.record }
    let r = try load(o)
    cache[o] = Cached(record: r, isChanged: false)
    return r
  }

  /// The object's record as `objects` holds it (none of this commit's changes).
  func load(_ o: ObjectID) throws -> ProjectedObject? {
    try txn.withValue(dbs.objects, key: StoreKey.object(o)) { b in
      try ProjectedObject.decode(b, id: o, model: model)
    }
  }

  /// The entity of a live object, `nil` when it does not exist; no copy of its values.
  func liveEntity(_ o: ObjectID) throws -> EntityID? {
    if let h = hot, h.id == o { return h.entity }
    return try record(o)?.entity
  }

  /// The value of one attribute of a live object (`nil` also when the object does not exist).
  func value(_ o: ObjectID, _ attribute: PropertyID) throws -> Value? {
    if let h = hot, h.id == o { return try h.value(attribute) }
    return try record(o)?.value(attribute)
  }

  /// Makes `o` the hot object (loading it), so that it can be changed in place.
  ///
  /// - Returns: the hot object.
  func makeHot(_ o: ObjectID) throws -> ProjectedObject {
    if let h = hot, h.id == o { return h }
    park()
    let cached = cache.removeValue(forKey: o)
    guard let loaded = try cached.map({ $0.record }) ?? load(o) else {
      cache[o] = Cached(record: nil, isChanged: false)
      throw StoreError.noSuchObject(reader.objectName(o))
    }
    hot = loaded
    touch(o)
    return loaded
  }

  /// Puts the hot object back into the cache.
  func park() {
    if let h = hot { cache[h.id] = Cached(record: h, isChanged: true) }
    hot = nil
  }

  /// The entity of a link's live target: from this commit's copy when it has one, else
  /// from the head of its stored record, which is not kept.
  ///
  /// A link changes no record, and a list of a hundred thousand members would otherwise
  /// hold every member's record in the cache for the rest of the batch.
  private func linkTargetEntity(_ t: ObjectID) throws -> EntityID {
    if let h = hot, h.id == t { return h.entity }
    if let i = cache.index(forKey: t) {
      guard let r = cache.values[i].record else { throw StoreError.noSuchObject(reader.objectName(t)) }
      return r.entity
    }
    let stored = try txn.withValue(dbs.objects, key: StoreKey.object(t)) { b in
      try ObjectState.readRecord(b, id: t, model: model) { (_, entity, _) throws(CorruptionError) in entity.id }
    }
    guard let stored else { throw StoreError.noSuchObject(reader.objectName(t)) }
    return stored
  }

  private func requireRecord(_ o: ObjectID) throws -> ProjectedObject {
    guard let r = try record(o) else { throw StoreError.noSuchObject(reader.objectName(o)) }
    return r
  }

  func entity(_ id: EntityID) throws -> Entity {
    guard let e = model.entity(id) else { throw StoreError.corrupt("unknown entity id \(id.rawValue)") }
    return e
  }

  private func relationship(of o: ProjectedObject, _ rel: PropertyID) throws -> Relationship {
    try relationship(ofEntity: o.entity, rel)
  }

  private func relationship(ofEntity entityID: EntityID, _ rel: PropertyID) throws -> Relationship {
    let e = try entity(entityID)
    guard case .relationship(let r)? = e.property(rel)?.kind else {
      throw StoreError.corrupt("\(e.name) has no relationship \(rel.rawValue)")
    }
    return r
  }

  // MARK: - Applying events

  func apply(_ event: Event) throws {
    switch event {
    case .insert(let o, let entityID):
      let e = try entity(entityID)
      // An identity is given once; the one exception is an object that comes back as itself
      // (an upcast re-making a destination whose source was filtered out, then in again):
      // the same entity, and not alive.
      // One descent of the B-tree (none for a new highest identity): the put refuses an
      // identity that is taken.
      if lastIdentityBefore == nil { lastIdentityBefore = try reader.lastObjectID() }
      let fresh = try txn.appendOrPut(
        dbs.identities, key: StoreKey.object(o), value: StoreKey.entityPrefix(entityID), flags: .noOverwrite)
      if !fresh {
        guard try reader.entity(of: o) == entityID, try liveEntity(o) == nil else {
          throw StoreError.corrupt("insert of \(e.name)/\(o.rawValue): identity already used")
        }
      }
      if entitiesAppend && isNew(o) {
        let key = StoreKey.entity(entityID, o)
        if try !txn.put(dbs.entities, key: key, value: [UInt8](), flags: [.append, .noOverwrite]) {
          entitiesAppend = false
          try txn.put(dbs.entities, key: key, value: [UInt8]())
        }
      } else {
        try txn.put(dbs.entities, key: StoreKey.entity(entityID, o), value: [UInt8]())
      }
      park()
      hot = ProjectedObject(ObjectState(id: o, entity: entityID, propertyCount: e.properties.count))
      touch(o)
      // An identity given again (an upcast re-making an object) may still hold entries.
      if fresh && model.hasUniquenessConstraints { insertedInCommit.append(o) }

    case .set(let o, let attribute, let value):
      let h = try makeHot(o)
      let e = try entity(h.entity)
      let i = Int(attribute.rawValue)
      guard i < e.attributeTypes.count, let type = e.attributeTypes[i] else {
        throw StoreError.corrupt("\(e.name)/\(o.rawValue): no attribute \(attribute.rawValue)")
      }
      // The type read through optional chaining: binding `value` copied the whole event.
      if let found = value?.type, found != type {
        throw StoreError.corrupt("\(e.name)/\(o.rawValue).#\(i): stored \(found.rawValue), expected \(type.rawValue)")
      }
      if e.indexed[i] {
        let entityID = h.entity
        if let old = try h.value(attribute), IndexKey.isKeyed(old) {
          try txn.delete(dbs.index, key: IndexKey.key(entity: entityID, attribute: attribute, value: old, object: o))
        }
        if let value, IndexKey.isKeyed(value) {
          try txn.put(
            dbs.index, key: IndexKey.key(entity: entityID, attribute: attribute, value: value, object: o),
            value: [UInt8]())
        }
      }
      h.set(attribute, value)

    case .link(let o, let relID, let t, let position):
      let s = try requireRecord(o)
      let r = try relationship(of: s, relID)
      let target = try linkTargetEntity(t)
      guard model.isKind(target, of: r.destination) else {
        throw StoreError.corrupt("\(reader.display(o)).\(r.name): target \(reader.display(t)) has the wrong entity")
      }
      try addLink(o, r, t, position: position)
      if let inv = r.inverse {
        try addLink(t, try relationship(ofEntity: target, inv), o, position: nil)
      } else {
        try txn.put(dbs.links, key: StoreKey.link(t, .reverse(of: relID), target: o), value: [UInt8]())
      }
      touch(o)
      touch(t)

    case .unlink(let o, let relID, let t):
      let s = try requireRecord(o)
      let r = try relationship(of: s, relID)
      try removeLink(o, r, t)
      if let inv = r.inverse {
        let target = try requireRecord(t)
        try removeLink(t, try relationship(of: target, inv), o)
      } else {
        try txn.delete(dbs.links, key: StoreKey.link(t, .reverse(of: relID), target: o))
      }
      touch(o)
      touch(t)

    case .delete(let o):
      let s = try requireRecord(o)
      guard try reader.allLinks(o).isEmpty else {
        throw StoreError.corrupt("delete of \(reader.display(o)) while it still has links")
      }
      try rememberKeysBeforeDelete(o, s.entity)
      try txn.delete(dbs.objects, key: StoreKey.object(o))
      try txn.delete(dbs.entities, key: StoreKey.entity(s.entity, o))
      if let e = model.entity(s.entity), e.hasIndexes {
        for (i, isIndexed) in e.indexed.enumerated() where isIndexed {
          let a = PropertyID(rawValue: UInt16(i))
          if let v = try s.value(a), IndexKey.isKeyed(v) {
            try txn.delete(dbs.index, key: IndexKey.key(entity: s.entity, attribute: a, value: v, object: o))
          }
        }
      }
      if hot?.id == o { hot = nil }
      cache[o] = Cached(record: nil, isChanged: false)
      touch(o)

    case .erase(let subject, _):
      try forgetBlindHashes(of: subject)
    }
  }

  private func addLink(_ o: ObjectID, _ r: Relationship, _ t: ObjectID, position: Int?) throws {
    let rel = LinkSlot(r.id)
    if !r.isToMany {
      var occupied = false
      try reader.scanLinks(o, rel) { _, _ in occupied = true }
      if occupied { throw StoreError.corrupt("\(reader.display(o)).\(r.name): to-one is already set") }
    }
    guard r.isOrdered else {
      let inserted = try txn.put(
        dbs.links, key: StoreKey.link(o, rel, target: t), value: [UInt8](), flags: .noOverwrite)
      if !inserted {
        throw StoreError.corrupt("\(reader.display(o)).\(r.name): already linked to \(reader.display(t))")
      }
      return
    }
    if try reader.orderKey(o, rel, of: t) != nil {
      throw StoreError.corrupt("\(reader.display(o)).\(r.name): already linked to \(reader.display(t))")
    }
    let list = ListName(object: o, rel: rel)
    if baseOrderKeys != nil {
      guard let key = baseOrderKeys?.next() else {
        throw StoreError.corrupt("\(reader.display(o)).\(r.name): the base has fewer order keys than ordered links")
      }
      listEnds[list] = nil
      try reader.placeOrdered(o, rel, t, key: key)
      return
    }
    if let end = listEnds[list], position == nil || position == end.count,
      let key = try reader.appendOrdered(o, rel, t, after: end.last, count: end.count)
    {
      listEnds[list] = (end.count + 1, key)
      return
    }
    let count = try reader.orderedCount(o, rel)
    let at = position ?? count
    guard at >= 0 && at <= count else {
      throw StoreError.invalidPosition(object: reader.objectName(o), relationship: r.name, position: at, count: count)
    }
    let key = try reader.insertOrdered(o, rel, t, at: at, count: count)
    listEnds[list] = at == count ? (count + 1, key) : nil
  }

  private func removeLink(_ o: ObjectID, _ r: Relationship, _ t: ObjectID) throws {
    let rel = LinkSlot(r.id)
    guard r.isOrdered else {
      guard try txn.delete(dbs.links, key: StoreKey.link(o, rel, target: t)) else {
        throw StoreError.corrupt("\(reader.display(o)).\(r.name): not linked to \(reader.display(t))")
      }
      return
    }
    listEnds[ListName(object: o, rel: rel)] = nil
    guard try reader.removeOrdered(o, rel, t) else {
      throw StoreError.corrupt("\(reader.display(o)).\(r.name): not linked to \(reader.display(t))")
    }
  }

  private func touch(_ o: ObjectID) {
    if touched.last != o { touched.append(o) }
  }

  /// The objects touched since history was last recorded, in identity order, each once.
  func sortedTouched() -> [ObjectID] {
    // A commit of one object, the common case, needs no sorting; the list is worked on
    // out of `self`, so that each step is not a dynamically checked access of the class.
    if touched.count < 2 { return touched }
    var list: [ObjectID] = []
    swap(&list, &touched)
    list.sort()
    var kept = 0
    for i in list.indices where kept == 0 || list[kept - 1] != list[i] {
      list[kept] = list[i]
      kept += 1
    }
    list.removeLast(list.count - kept)
    touched = list
    return list
  }

  /// Whether `o` was inserted by this projector (see `lastIdentityBefore`).
  func isNew(_ o: ObjectID) -> Bool {
    guard let last = lastIdentityBefore else { return false }
    return o.rawValue > last
  }

  // MARK: - End of a commit

  /// Writes the changed object records and one history entry per touched object.
  func flush(commitSequence: UInt64) throws {
    try recordHistory(commitSequence: commitSequence, keepingKeys: false)
    try writeObjects()
  }

  /// Forgets which objects were touched, writing no history (a scratch projection).
  func forgetTouched() {
    park()
    touched.removeAll(keepingCapacity: true)
    insertedInCommit.removeAll(keepingCapacity: true)
    deletedKeys.removeAll()
  }

  /// Writes one history entry per object touched since the last call, and brings their
  /// uniqueness entries up to date.
  ///
  /// - Parameter keepingKeys: whether the objects' uniqueness keys are kept for the next
  ///   commit (a replay's, before the records are written); not when they are written next.
  func recordHistory(commitSequence: UInt64, keepingKeys: Bool = true) throws {
    park()  // the next commit that changes the hot object must mark it touched again
    try keepUniqueness(keepingKeys: keepingKeys)
    // In key order, so that the entries of new objects are appends.
    for o in sortedTouched() {
      let key = StoreKey.history(o, commitSequence)
      if isNew(o) {
        try txn.appendOrPut(dbs.history, key: key, value: [UInt8]())
      } else {
        try txn.put(dbs.history, key: key, value: [UInt8]())
      }
    }
    touched.removeAll(keepingCapacity: true)
    insertedInCommit.removeAll(keepingCapacity: true)
    deletedKeys.removeAll()
  }

  /// Ends a base's replay: the identities of the objects deleted before its cut, and one
  /// history entry per object at the version it had there (``HistoryBase``).
  func finishBase(_ base: HistoryBase) throws {
    if baseOrderKeys?.next() != nil {
      throw StoreError.corrupt("the base has more order keys than ordered links")
    }
    baseOrderKeys = nil
    for (o, e) in base.deleted.sorted(by: { $0.key < $1.key }) {
      guard try txn.put(dbs.identities, key: StoreKey.object(o), value: StoreKey.entityPrefix(e), flags: .noOverwrite)
      else { throw StoreError.corrupt("the base gives identity \(o.rawValue) twice") }
    }
    park()
    try keepUniqueness(keepingKeys: true)
    let objects = sortedTouched()
    guard objects.count == base.versions.count else {
      throw StoreError.corrupt("the base holds \(objects.count) objects and versions of \(base.versions.count)")
    }
    for o in objects {
      guard let v = base.versions[o], v <= base.lastSequence else {
        throw StoreError.corrupt("the base has no version of \(reader.display(o)) before its cut")
      }
      try txn.put(dbs.history, key: StoreKey.history(o, v), value: [UInt8]())
    }
    forgetTouched()
  }

  /// Writes the object records changed since the last call (a replay calls this once per
  /// batch of commits, so an object changed by many commits is written once).
  func writeObjects() throws {
    try reader.flushRanks()
    park()
    var changed: [(id: ObjectID, record: ProjectedObject)] = []
    changed.reserveCapacity(cache.count)
    for (o, c) in cache where c.isChanged {
      if let r = c.record { changed.append((o, r)) }
    }
    // In key order, so that the records of new objects are appends.
    changed.sort { $0.id < $1.id }
    for (o, r) in changed {
      record.reset()
      try r.encode(into: &record)
      if isNew(o) {
        try txn.appendOrPut(dbs.objects, key: StoreKey.object(o), value: record.bytes)
      } else {
        try txn.put(dbs.objects, key: StoreKey.object(o), value: record.bytes)
      }
    }
    cache.removeAll(keepingCapacity: true)
    uniqueKeys.removeAll()
    listEnds.removeAll(keepingCapacity: true)
  }

  /// Readies the projector for the next commit in the same LMDB transaction.
  ///
  /// It forgets what the last commit left (a commit that wrote nothing leaves the records
  /// it read cached; one that wrote, nothing) and keeps the buffers' capacity. What it
  /// knows of identities stays true.
  func startCommit() {
    hot = nil
    cache.removeAll(keepingCapacity: true)
    listEnds.removeAll(keepingCapacity: true)
    touched.removeAll(keepingCapacity: true)
    insertedInCommit.removeAll(keepingCapacity: true)
    uniqueKeys.removeAll()
    deletedKeys.removeAll()
  }
}
