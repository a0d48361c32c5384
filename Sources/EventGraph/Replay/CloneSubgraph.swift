import LMDB

/// One object of a subgraph: its state and its relationships (targets by property ID,
/// in order where ordered; empty for attributes and empty relationships).
struct Member: Sendable {
  var state: ObjectState
  var lists: [[ObjectID]]

  /// The targets of a relationship.
  @inline(__always)
  func targets(_ rel: PropertyID) -> [ObjectID] {
    let p = Int(rel.rawValue)
    return p < lists.count ? lists[p] : []
  }

  init(state: ObjectState, lists: [[ObjectID]]) {
    self.state = state
    self.lists = lists
  }

  init(_ v: ObjectVersion, model: Model) {
    var lists = [[ObjectID]](repeating: [], count: model.entity(v.state.entity)?.properties.count ?? 0)
    for (rel, targets) in v.relationships where Int(rel.rawValue) < lists.count { lists[Int(rel.rawValue)] = targets }
    self.init(state: v.state, lists: lists)
  }

  /// The public form, for attribute overrides.
  var version: ObjectVersion {
    var relationships: [PropertyID: [ObjectID]] = [:]
    for (p, targets) in lists.enumerated() where !targets.isEmpty {
      relationships[PropertyID(rawValue: UInt16(p))] = targets
    }
    return ObjectVersion(state: state, relationships: relationships)
  }
}

/// A subgraph read from a store, ready to be replayed: each object's state and
/// relationships (now or as of a sequence), in the order it was found, the root first.
struct Subgraph: Sendable {
  /// `nil` for a whole store.
  let root: ObjectID?
  private(set) var ids: [ObjectID] = []
  private(set) var members: [Member] = []
  /// Objects included only because a member references them (snapshots keep them so
  /// that references stay meaningful); a clone has none.
  private(set) var boundary: Set<ObjectID> = []
  private var positions = IdentityTable()

  init(root: ObjectID?) { self.root = root }

  var count: Int { ids.count }

  /// The member's index in ``ids``; `nil` for an object outside the subgraph.
  @inline(__always)
  func index(of id: ObjectID) -> Int? { positions[id] }

  mutating func add(_ id: ObjectID, _ member: Member, boundary isBoundary: Bool = false) {
    guard positions.insert(id, ids.count) else { return }
    ids.append(id)
    members.append(member)
    if isBoundary { boundary.insert(id) }
  }

  /// Makes a boundary object a full member; false when it was one already.
  mutating func promote(_ id: ObjectID) -> Bool { boundary.remove(id) != nil }
}

/// Identities to small integers: an open-addressing table, several times cheaper than
/// `Dictionary` with `Hasher` for the millions of lookups a large clone makes.
struct IdentityTable: Sendable {
  private var keys: [UInt64]
  private var values: [Int32]
  private var mask: Int
  private(set) var count = 0

  init(capacity: Int = 16) {
    var size = 16
    while size < capacity * 2 { size <<= 1 }
    keys = Array(repeating: 0, count: size)
    values = Array(repeating: 0, count: size)
    mask = size - 1
  }

  /// Nearby identities land in nearby slots.
  ///
  /// A subgraph's identities are mostly dense runs, so lookups in identity order stay in
  /// cache. The high bits are folded in so that runs far apart do not pile up.
  @inline(__always)
  private func slot(_ key: UInt64) -> Int {
    Int(truncatingIfNeeded: key ^ (key >> 21) ^ (key >> 42)) & mask
  }

  subscript(_ id: ObjectID) -> Int? {
    // Identity 0 is never given, so 0 marks an empty slot.
    var i = slot(id.rawValue)
    while true {
      let k = keys[i]
      if k == id.rawValue { return Int(values[i]) }
      if k == 0 { return nil }
      i = (i + 1) & mask
    }
  }

  /// Adds `id` → `value`; false when `id` is there already (its value is kept).
  mutating func insert(_ id: ObjectID, _ value: Int) -> Bool {
    if (count + 1) * 2 > keys.count { grow() }
    var i = slot(id.rawValue)
    while keys[i] != 0 {
      if keys[i] == id.rawValue { return false }
      i = (i + 1) & mask
    }
    keys[i] = id.rawValue
    values[i] = Int32(truncatingIfNeeded: value)
    count += 1
    return true
  }

  private mutating func grow() {
    let (oldKeys, oldValues) = (keys, values)
    keys = Array(repeating: 0, count: oldKeys.count * 2)
    values = Array(repeating: 0, count: oldKeys.count * 2)
    mask = keys.count - 1
    count = 0
    for (k, v) in zip(oldKeys, oldValues) where k != 0 { _ = insert(ObjectID(k), Int(v)) }
  }
}

extension VersionReader {
  /// The sequence to read at: `nil` (now) when `asOf` is absent or is the end of the log.
  ///
  /// - Throws: ``StoreError/sequenceBeyondLog(_:last:)``.
  static func resolve(_ asOf: UInt64?, reader: GraphReader<T>) throws -> UInt64? {
    guard let asOf else { return nil }
    let last = try reader.logEnd().sequence
    guard asOf <= last else { throw StoreError.sequenceBeyondLog(asOf, last: last) }
    return asOf == last ? nil : asOf
  }

  /// The root's version, or an error that says why there is none.
  ///
  /// - Throws: ``StoreError/noSuchObject(_:)`` for an identity the store never gave,
  ///   ``StoreError/deletedObject(_:asOf:)`` for one that is not live (then).
  mutating func requireRoot(_ root: ObjectID) throws -> (Entity, Member) {
    guard let e = try entity(of: root), let entity = model.entity(e) else {
      throw StoreError.noSuchObject("#\(root.rawValue)")
    }
    guard let m = try member(root) else { throw StoreError.deletedObject(reader.display(root), asOf: asOf) }
    return (entity, m)
  }

  /// Collects the objects reachable from the root along `deep` relationships, breadth
  /// first (relationships in model order, targets in list order), reading each once.
  ///
  /// - Parameter references: also include the targets of `reference` relationships,
  ///   without following them (a snapshot's boundary).
  mutating func collect(
    root: ObjectID, rootMember: Member, policies: CopyPolicyTable, references: Bool = false
  ) throws -> Subgraph {
    var graph = Subgraph(root: root)
    graph.add(root, rootMember)
    var queue = [0]
    var next = 0
    let relationships = LinkShape.table(model)
    // Two cursors for the whole walk: a subgraph is mostly read in identity order, and
    // LMDB finds a key on the cursor's current page without descending the tree again.
    let cursors = try MemberCursors(reader)
    var scratch: [ObjectID] = []
    while next < queue.count {
      let v = graph.members[queue[next]]
      next += 1
      let e = v.state.entity
      guard Int(e.rawValue) < relationships.count else { continue }
      for r in relationships[Int(e.rawValue)] {
        let targets = v.targets(r.id)
        guard !targets.isEmpty else { continue }
        let policy = policies.policy(e, r.id)
        guard policy == .deep || (references && policy == .reference) else { continue }
        for t in targets {
          if let i = graph.index(of: t) {
            // Found by reference first, reached deep now: a member after all.
            if policy == .deep, graph.promote(t) { queue.append(i) }
            continue
          }
          guard let tv = try asOf == nil ? cursors.member(t, reader, scratch: &scratch) : member(t) else {
            throw StoreError.corrupt("\(reader.display(v.state.id)) names \(reader.display(t)), which does not exist")
          }
          graph.add(t, tv, boundary: policy == .reference)
          if policy == .deep { queue.append(graph.count - 1) }
          if graph.count % 4096 == 0 { progress(graph.count) }
        }
      }
    }
    return graph
  }
}

/// Reads current members through two long-lived cursors, one on `objects`, one on `links`.
struct MemberCursors: ~Copyable {
  let objects: Cursor
  let links: Cursor

  init<T: TransactionReading>(_ reader: GraphReader<T>) throws {
    let o = try reader.txn.cursor(reader.dbs.objects)
    let l = try reader.txn.cursor(reader.dbs.links)
    objects = o
    links = l
  }

  /// The object's current state and relationships; `nil` when it is not live.
  func member<T>(_ id: ObjectID, _ reader: GraphReader<T>, scratch: inout [ObjectID]) throws -> Member? {
    let key = StoreKey.object(id)
    guard try objects.find(key) else { return nil }
    let state = try objects.withCurrent { _, v in try ObjectState.decode(v, id: id, model: reader.model) }
    let count = state.values.count
    var lists = [[ObjectID]](repeating: [], count: count)
    // Each relationship's targets gathered in one reused buffer, then stored at their size.
    var rel = -1
    var more = try links.seek(key)
    while more {
      let inside = try links.withCurrent { k, v -> Bool in
        guard KeyField.hasPrefix(k, key), let r = KeyField.u16(k, at: 8) else { return false }
        // Reverse entries of one-way relationships (high bit) belong to the other object.
        guard Int(r) < count else { return true }
        if Int(r) != rel {
          if rel >= 0 { lists[rel] = scratch }
          rel = Int(r)
          scratch.removeAll(keepingCapacity: true)
        }
        if v.count == 8, let t = KeyField.u64(v, at: 0) {
          scratch.append(ObjectID(t))
        } else if let t = KeyField.u64(k, at: 10) {
          scratch.append(ObjectID(t))
        }
        return true
      }
      guard inside else { break }
      more = try links.next()
    }
    if rel >= 0 { lists[rel] = scratch }
    return Member(state: state, lists: lists)
  }
}

extension Subgraph {
  /// Refuses the references a clone cannot make, before anything is written: one that
  /// would take its target from the original (the inverse is to-one); one to an object
  /// deleted since the sequence copied; into another store, any target not copied.
  func checkReferences<T: TransactionReading>(
    policies: CopyPolicyTable, reader: GraphReader<T>, crossStore: Bool
  ) throws {
    let model = reader.model
    let relationships = LinkShape.table(model)
    for v in members {
      let e = v.state.entity
      guard Int(e.rawValue) < relationships.count else { continue }
      for shape in relationships[Int(e.rawValue)] where policies.policy(e, shape.id) == .reference {
        for t in v.targets(shape.id) where index(of: t) == nil {
          // Names are looked up only for the error.
          guard case .relationship(let r)? = model.entity(e)?.property(shape.id)?.kind else { continue }
          let (object, target) = (reader.display(v.state.id), reader.display(t))
          if crossStore {
            throw StoreError.referenceOutsideStore(object: object, relationship: r.name, target: target)
          }
          if let back = r.inverseRelationship(in: model), !back.isToMany {
            throw StoreError.referenceWouldMove(
              object: object, relationship: r.name, target: target, inverse: back.name)
          }
          if try reader.object(t) == nil {
            throw StoreError.referenceToDeleted(object: object, relationship: r.name, target: target)
          }
        }
      }
    }
  }
}
