import Foundation
internal import LMDB

/// The projection of a clone's commit, written directly: the fast path of a clone.
///
/// A clone's commit only inserts new objects, sets their values and links them, to each
/// other and to existing objects they reference. Applying those events one by one
/// through ``Projector`` would read back from LMDB state that is already known, so the
/// records are computed from the subgraph instead (the same links the events make, by
/// the same rule, ``SubgraphEvents/keeps(_:_:_:)``), and each database gets its records
/// once, in key order, appended where the keys of new identities sort after every
/// existing key. The log still receives the events, and replaying them gives these
/// records byte for byte: `verify` checks that in the tests, on random graphs too.
///
/// This mirrors what ``Projector`` writes for inserts, sets and links (objects,
/// identities, entities, history, links on both sides, ordered lists' members, attribute
/// indexes): a change to
/// the projection's layout must be made here too, and the clone tests' `verify` fails
/// until it is.
struct FreshObjects {
  /// An entry that lands on an existing object: the inverse of a link, or the reverse
  /// entry of a one-way relationship (high bit set), in the order the events make them.
  struct OutsideEntry {
    let target: ObjectID
    let rel: LinkSlot
    let source: ObjectID
  }

  let replay: SubgraphEvents
  /// The copies' states (new identities, values after overrides), by member.
  let states: [ObjectState]
  /// The copies' relationships, laid out as the subgraph's (``Subgraph/slot(_:_:)``):
  /// the targets kept, renamed, in the original order, list after list.
  private(set) var targets: [ObjectID] = []
  /// Where the lists end in ``targets``, after a leading 0.
  private var ends: [Int]
  /// The lists before this one are complete.
  private var open = 0
  /// Reverse entries of one-way relationships that point at a copy, by member.
  private(set) var reverse: [Int: [(rel: LinkSlot, source: ObjectID)]] = [:]
  private(set) var outside: [OutsideEntry] = []
  /// The copies' ordered lists as replaying the events builds them, for their order keys
  /// (Projection/OrderedLinks.swift): by copy and relationship.
  private var orderedLists: [ListName: OrderedListModel] = [:]

  /// Empty relationships, to be filled by ``keep(_:_:_:_:)`` as the links are replayed,
  /// then closed by ``finish()``.
  init(_ replay: SubgraphEvents, states: [ObjectState]) {
    self.replay = replay
    self.states = states
    ends = Array(repeating: 0, count: replay.graph.slotCount + 1)
    targets.reserveCapacity(replay.graph.targets.count)
  }

  /// Records a link the copy keeps, from the list of member `y`, in list order (lists in
  /// slot order): the target renamed when it is copied, and the entry the link makes on
  /// the other side when that side is a reverse entry or an existing object.
  mutating func keep(_ y: Int, _ r: LinkShape, _ t: ObjectID, _ x: Int?) {
    let ids = replay.identities
    guard let list = replay.graph.slot(y, r.id) else { return }
    precondition(list >= open, "links are kept list by list, in slot order")
    close(upTo: list)
    targets.append(x.map { ids[$0] } ?? t)
    ends[list + 1] = targets.count
    if let x {
      if r.inverse == nil { reverse[x, default: []].append((LinkSlot.reverse(of: r.id), ids[y])) }
    } else {
      outside.append(
        OutsideEntry(target: t, rel: r.inverse.map(LinkSlot.init) ?? LinkSlot.reverse(of: r.id), source: ids[y]))
    }
  }

  /// Follows a link event of the commit into the copies' ordered lists, as the projector
  /// would place it: at its position in the object's list, appended to the inverse.
  mutating func follow(_ e: Event) throws {
    // The relationship's shape, not the model's `Relationship`: no names copied per link.
    guard case .link(let o, let rel, let t, let position) = e, let y = member(o),
      let r = replay.linkShape(states[y].entity, rel)
    else { return }
    if r.isOrdered {
      try orderedLists[ListName(object: o, rel: LinkSlot(rel)), default: OrderedListModel()].insert(
        t, at: position)
    }
    if let inv = r.inverse, r.inverseIsOrdered, member(t) != nil {
      try orderedLists[ListName(object: t, rel: LinkSlot(inv)), default: OrderedListModel()].insert(o, at: nil)
    }
  }

  /// Ends the lists before `list`, which get no more targets.
  private mutating func close(upTo list: Int) {
    while open < list {
      open += 1
      ends[open + 1] = targets.count
    }
  }

  /// Ends every list, once the links are replayed.
  mutating func finish() { close(upTo: ends.count - 2) }

  /// The copy of member `m`'s targets of a relationship.
  func targets(_ m: Int, _ rel: PropertyID) -> ArraySlice<ObjectID> {
    guard let list = replay.graph.slot(m, rel) else { return [] }
    return targets[ends[list]..<ends[list + 1]]
  }

  /// The member whose copy has this identity.
  func member(_ id: ObjectID) -> Int? {
    guard let first = replay.identities.first, id >= first else { return nil }
    let i = Int(id.rawValue - first.rawValue)
    return i < states.count && states[i].id == id ? i : nil
  }

  /// The copies and the existing objects the commit touches, for validation.
  var touched: [ObjectID] {
    var ids = states.map(\.id)
    ids.append(contentsOf: Set(outside.map(\.target)))
    return ids.sorted()
  }

  // MARK: - Writing

  /// Writes every record of the commit starting at `sequence`.
  ///
  /// - Precondition: the identities are consecutive and new, as a clone gives them.
  func write(_ reader: GraphReader<WriteHandle>, sequence: UInt64) throws {
    let txn = reader.txn
    let dbs = reader.dbs
    let model = replay.model
    let graph = replay.graph
    // New identities sort after every identity given so far, hence after every key of
    // these databases that starts with an identity: appended, no search, no page split.
    let after = try reader.lastObjectID()
    let append: PutFlags = (states.first.map { $0.id.rawValue > after } ?? false) ? .append : []
    let ordered = model.entities.map { e in
      e.properties.map { if case .relationship(let r) = $0.kind { r.isOrdered } else { false } }
    }
    let none: [UInt8] = []
    // One cursor per database: appending through a cursor that appended last stays on
    // its page instead of descending the tree for every key.
    try txn.withCursor(dbs.identities) { identities in
      try txn.withCursor(dbs.objects) { objects in
        try txn.withCursor(dbs.history) { history in
          try txn.withCursor(dbs.links) { links in
            // One buffer for every object's record.
            var record = BinaryWriter(capacity: 256)
            for (y, s) in states.enumerated() {
              let o = s.id
              try identities.put(key: StoreKey.object(o), value: StoreKey.entityPrefix(s.entity), flags: append)
              record.bytes.removeAll(keepingCapacity: true)
              s.encode(into: &record)
              try objects.put(key: StoreKey.object(o), value: record.bytes, flags: append)
              try history.put(key: StoreKey.history(o, sequence), value: none, flags: append)
              let isOrdered = ordered[Int(s.entity.rawValue)]
              let first = graph.slots(y).lowerBound
              for list in graph.slots(y) where ends[list] < ends[list + 1] {
                let (p, range) = (list - first, ends[list]..<ends[list + 1])
                let rel = LinkSlot(stored: UInt16(p))
                if p < isOrdered.count, isOrdered[p] {
                  let list = orderedLists[ListName(object: o, rel: rel)]?.members ?? []
                  guard list.count == range.count, zip(list, targets[range]).allSatisfy({ $0.target == $1 }) else {
                    throw StoreError.corrupt(
                      "\(reader.display(o)): the events of relationship \(rel) give another order")
                  }
                  for m in list {
                    try links.put(
                      key: StoreKey.link(o, rel, order: m.key), value: BigEndianKey(m.target.rawValue), flags: append)
                    try txn.put(dbs.members, key: StoreKey.link(o, rel, target: m.target), value: BigEndianKey(m.key))
                  }
                  try txn.put(dbs.members, key: StoreKey.links(o, rel), value: BigEndianKey(UInt64(range.count)))
                  if list.count > OrderRanks.threshold {
                    try reader.writeRankNodes(o, rel, OrderRanks.nodes(list.map(\.key)))
                  }
                } else if range.count == 1 {
                  try links.put(
                    key: StoreKey.link(o, rel, target: targets[range.lowerBound]), value: none, flags: append)
                } else {
                  for t in targets[range].sorted() {
                    try links.put(key: StoreKey.link(o, rel, target: t), value: none, flags: append)
                  }
                }
              }
              if let entries = reverse[y] {
                for (rel, t) in entries.sorted(by: { ($0.rel, $0.source) < ($1.rel, $1.source) }) {
                  try links.put(key: StoreKey.link(o, rel, target: t), value: none, flags: append)
                }
              }
            }
            // Within an entity the new identities come last, but other entities follow: sorted,
            // and put through a cursor, which finds a key next to the one it put last without
            // descending the tree again.
            var members = states.map { (entity: $0.entity, id: $0.id) }
            if members.count > 1, zip(members, members.dropFirst()).contains(where: { $0.entity > $1.entity }) {
              members.sort { ($0.entity, $0.id) < ($1.entity, $1.id) }
            }
            try txn.withCursor(dbs.entities) { entities in
              for m in members { try entities.put(key: StoreKey.entity(m.entity, m.id), value: none) }
              // Indexed attributes: one entry per value, as the projector keeps them.
              let indexed = model.entities.map { $0.hasIndexes ? $0.indexed : [] }
              for s in states where !indexed[Int(s.entity.rawValue)].isEmpty {
                for (i, isIndexed) in indexed[Int(s.entity.rawValue)].enumerated() where isIndexed {
                  let a = PropertyID(rawValue: UInt16(i))
                  guard let v = s[a], IndexKey.isKeyed(v) else { continue }
                  try txn.put(
                    dbs.index, key: IndexKey.key(entity: s.entity, attribute: a, value: v, object: s.id), value: none)
                }
              }
              if model.hasUniquenessConstraints, let unique = dbs.unique {
                // New objects: they held no keys.
                let index = UniquenessIndex(txn: txn, db: unique, model: model)
                let items = try states.filter { !model.uniqueness[Int($0.entity.rawValue)].isEmpty }.map { s in
                  UniquenessIndex.Item(
                    id: s.id, entity: s.entity,
                    old: [],
                    new: try index.keys(s.entity, values: { s[$0] }), value: { s[$0] })
                }
                try index.update(items) { reader.objectName($0) }
              }
              try writeOutside(reader, sequence: sequence)
            }
          }
        }
      }
    }
  }

  /// The entries that land on existing objects: appended to their ordered inverses, added
  /// to the others, and one history entry each.
  private func writeOutside(_ reader: GraphReader<WriteHandle>, sequence: UInt64) throws {
    struct List: Hashable {
      let target: ObjectID
      let rel: LinkSlot
    }
    let txn = reader.txn
    let none: [UInt8] = []
    var counts: [List: Int] = [:]
    var targets: Set<ObjectID> = []
    for entry in outside {
      targets.insert(entry.target)
      guard !entry.rel.isReverse else {
        try txn.put(reader.dbs.links, key: StoreKey.link(entry.target, entry.rel, target: entry.source), value: none)
        continue
      }
      guard let e = try reader.entity(of: entry.target),
        case .relationship(let r)? = replay.model.entity(e)?.property(entry.rel.relationship)?.kind
      else { throw StoreError.corrupt("\(reader.display(entry.target)) has no relationship \(entry.rel.stored)") }
      if r.isOrdered {
        let count = try reader.orderedCount(entry.target, entry.rel)
        try reader.insertOrdered(entry.target, entry.rel, entry.source, at: count, count: count)
        continue
      }
      let list = List(target: entry.target, rel: entry.rel)
      let count = try counts[list] ?? reader.related(entry.target, r.id).count
      guard r.isToMany || count == 0 else {
        throw StoreError.corrupt("\(reader.display(entry.target)).\(r.name): to-one is already set")
      }
      counts[list] = count + 1
      try txn.put(reader.dbs.links, key: StoreKey.link(entry.target, entry.rel, target: entry.source), value: none)
    }
    for t in targets { try txn.put(reader.dbs.history, key: StoreKey.history(t, sequence), value: none) }
  }
}

/// The graph as the commit leaves it: the copies from their records, existing objects
/// from the store (already written), for the model's validation.
struct FreshGraph: ValidatedGraph {
  let fresh: FreshObjects
  let reader: GraphReader<WriteHandle>

  var model: Model { reader.model }

  func object(_ id: ObjectID) throws -> ObjectState? {
    if let i = fresh.member(id) { return fresh.states[i] }
    return try reader.object(id)
  }

  func entityID(of id: ObjectID) throws -> EntityID? {
    if let i = fresh.member(id) { return fresh.states[i].entity }
    return try reader.entity(of: id)
  }

  func related(_ id: ObjectID, _ relationship: PropertyID) throws -> [ObjectID] {
    if let i = fresh.member(id) { return Array(fresh.targets(i, relationship)) }
    return try reader.related(id, relationship)
  }

  func relatedCount(_ id: ObjectID, _ relationship: PropertyID) throws -> Int {
    if let i = fresh.member(id) { return fresh.targets(i, relationship).count }
    return try reader.related(id, relationship).count
  }

  func objects(of entity: EntityID) throws -> [ObjectID] { try reader.objects(of: entity) }
}

extension EventStore {
  /// Runs `build` in a write transaction of its own and appends, as one commit, the
  /// events it returns (encoded as they were made), whose records it has computed in a
  /// ``FreshObjects``.
  ///
  /// The same steps as ``write(metadata:_:)``: refused while a rebuild is unfinished or
  /// when another handle changed the active model version, rules of the model checked,
  /// the whole redone in a bigger map when the map is full.
  func writeFresh<R>(
    metadata: CommitMetadata,
    _ build: (GraphReader<WriteHandle>) throws -> (value: R, events: CommitCodec.EventBody, fresh: FreshObjects)
  ) throws -> (value: R, commit: CommitInfo) {
    if options.readOnly { throw StoreError.readOnly(path: path) }
    return try commits.run { batch, _ in
      try batch.checkWritable()
      let reader = batch.reader
      let end = try batch.currentLogEnd()
      let built = try build(reader)
      try built.fresh.write(reader, sequence: end.sequence + 1)
      try Validator(model: model, graph: FreshGraph(fresh: built.fresh, reader: reader)).validate(built.fresh.touched)
      let info = try batch.append(
        body: built.events, metadata: metadata, projector: Projector(txn: batch.handle, dbs: dbs, model: model))
      return (built.value, info)
    }
  }
}
