internal import LMDB

/// One object read by itself: its state and its relationships (targets by property ID,
/// in order where ordered; empty for attributes and empty relationships).
struct Member: Sendable {
  var state: ObjectState
  var lists: [[ObjectID]]

  init(state: ObjectState, lists: [[ObjectID]]) {
    self.state = state
    self.lists = lists
  }

  init(_ v: ObjectVersion, model: Model) {
    var lists = [[ObjectID]](repeating: [], count: model.entity(v.state.entity)?.properties.count ?? 0)
    for (rel, targets) in v.relationships where Int(rel.rawValue) < lists.count { lists[Int(rel.rawValue)] = targets }
    self.init(state: v.state, lists: lists)
  }

  /// The public form.
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
///
/// The relationships of every member are kept one after another in one array, not as an
/// array per list: a large clone holds hundreds of thousands of members, and a few heap
/// objects each would cost more to allocate, visit and free than the lists themselves.
struct Subgraph: Sendable {
  /// `nil` for a whole store.
  let root: ObjectID?
  private(set) var ids: [ObjectID] = []
  private(set) var states: [ObjectState] = []
  /// Objects included only because a member references them (snapshots keep them so
  /// that references stay meaningful); a clone has none.
  private(set) var boundary: Set<ObjectID> = []
  private var positions = IdentityTable()
  /// Every list's targets, member after member, property after property.
  private(set) var targets: [ObjectID] = []
  /// Where the lists end in ``targets``, after a leading 0: list `s` (see
  /// ``slot(_:_:)``) is `ends[s] ..< ends[s + 1]`.
  private var ends: [Int] = [0]
  /// Each member's first slot, and one past the last member's last slot.
  private var firstSlot: [Int] = [0]

  init(root: ObjectID?) { self.root = root }

  var count: Int { ids.count }

  /// The number of lists of all members: the slots of ``slot(_:_:)``.
  var slotCount: Int { ends.count - 1 }

  /// The member's index in ``ids``; `nil` for an object outside the subgraph.
  @inline(__always)
  func index(of id: ObjectID) -> Int? { positions[id] }

  /// The slot of member `m`'s list for a property; `nil` past the member's properties.
  @inline(__always)
  func slot(_ m: Int, _ rel: PropertyID) -> Int? {
    let s = firstSlot[m] + Int(rel.rawValue)
    return s < firstSlot[m + 1] ? s : nil
  }

  /// The first slot of member `m` and one past its last.
  @inline(__always)
  func slots(_ m: Int) -> Range<Int> { firstSlot[m]..<firstSlot[m + 1] }

  /// Where list `s` lies in ``targets``.
  @inline(__always)
  func range(slot s: Int) -> Range<Int> { ends[s]..<ends[s + 1] }

  /// Where member `m`'s targets of a relationship lie in ``targets`` (empty for an
  /// attribute).
  @inline(__always)
  func range(_ m: Int, _ rel: PropertyID) -> Range<Int> {
    guard let s = slot(m, rel) else { return 0..<0 }
    return range(slot: s)
  }

  /// Member `m`'s targets of a relationship.
  func targets(_ m: Int, _ rel: PropertyID) -> ArraySlice<ObjectID> { targets[range(m, rel)] }

  mutating func add(_ id: ObjectID, _ member: Member, boundary isBoundary: Bool = false) {
    guard add(id, state: member.state, boundary: isBoundary) else { return }
    for (p, list) in member.lists.enumerated() where p < member.state.values.count {
      for t in list { appendTarget(t, rel: p) }
    }
  }

  /// Adds a member with empty lists, to be filled by ``appendTarget(_:rel:)``; false
  /// when it is a member already.
  mutating func add(_ id: ObjectID, state: ObjectState, boundary isBoundary: Bool = false) -> Bool {
    guard positions.insert(id, ids.count) else { return false }
    ids.append(id)
    let lists = state.values.count
    states.append(state)
    ends.append(contentsOf: repeatElement(targets.count, count: lists))
    firstSlot.append(firstSlot[firstSlot.count - 1] + lists)
    if isBoundary { boundary.insert(id) }
    return true
  }

  /// Appends a target to the last member's list `rel`; a member's lists are filled in
  /// relationship order.
  mutating func appendTarget(_ t: ObjectID, rel: Int) {
    let s = firstSlot[firstSlot.count - 2] + rel
    assert(s < slotCount && ends[s + 1] == targets.count, "lists are filled in relationship order")
    targets.append(t)
    // The later lists of the member (still empty) start after it.
    for later in (s + 1)..<ends.count { ends[later] = targets.count }
  }

  /// Makes a boundary object a full member; false when it was one already.
  mutating func promote(_ id: ObjectID) -> Bool { boundary.remove(id) != nil }

  /// Member `m` in the public form, for attribute overrides.
  func version(_ m: Int) -> ObjectVersion {
    var relationships: [PropertyID: [ObjectID]] = [:]
    for s in slots(m) where !range(slot: s).isEmpty {
      relationships[PropertyID(rawValue: UInt16(s - firstSlot[m]))] = Array(targets[range(slot: s)])
    }
    return ObjectVersion(state: states[m], relationships: relationships)
  }
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
  /// - Throws: ``ErrorCode/sequenceBeyondLog``.
  static func resolve(_ asOf: UInt64?, reader: GraphReader<T>) throws -> UInt64? {
    guard let asOf else { return nil }
    let last = try reader.logEnd().sequence
    guard asOf <= last else { throw StoreError.sequenceBeyondLog(asOf, last: last) }
    try reader.checkHistory(at: asOf)
    return asOf == last ? nil : asOf
  }

  /// The root's version, or an error that says why there is none.
  ///
  /// - Throws: ``ErrorCode/noSuchObject`` for an identity the store never gave,
  ///   ``ErrorCode/deletedObject`` for one that is not live (then).
  mutating func requireRoot(_ root: ObjectID) throws -> (Entity, Member) {
    guard let e = try entity(of: root), let entity = model.entity(e) else {
      throw StoreError.noSuchObject(StoreError.ObjectName(entity: nil, id: root))
    }
    guard let m = try member(root) else { throw StoreError.deletedObject(reader.objectName(root), asOf: asOf) }
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
    return try reader.txn.withCursor(reader.dbs.objects) { objects in
      try reader.txn.withCursor(reader.dbs.links) { links in
        while next < queue.count {
          let m = queue[next]
          next += 1
          let e = graph.states[m].entity
          guard Int(e.rawValue) < relationships.count else { continue }
          for r in relationships[Int(e.rawValue)] {
            let policy = policies.policy(e, r.id)
            guard policy == .deep || (references && policy == .reference) else { continue }
            // By index: the walk appends to the graph's targets while it reads them.
            for k in graph.range(m, r.id) {
              let t = graph.targets[k]
              if let i = graph.index(of: t) {
                // Found by reference first, reached deep now: a member after all.
                if policy == .deep, graph.promote(t) { queue.append(i) }
                continue
              }
              let found: Bool
              if asOf == nil {
                found = try MemberCursors.read(
                  objects: objects, links: links, t, into: &graph, boundary: policy == .reference, model: model)
              } else if let tv = try member(t) {
                graph.add(t, tv, boundary: policy == .reference)
                found = true
              } else {
                found = false
              }
              guard found else {
                throw StoreError.corrupt(
                  "\(reader.display(graph.ids[m])) names \(reader.display(t)), which does not exist")
              }
              if policy == .deep { queue.append(graph.count - 1) }
              if graph.count % 4096 == 0 { progress(graph.count) }
            }
          }
        }
        return graph
      }
    }
  }
}

/// Reads current members through two cursors lent for the whole walk, one on `objects`, one
/// on `links`.
enum MemberCursors {
  /// Adds the object's current state and relationships to `graph`, straight from the
  /// records; false when it is not live.
  static func read(
    objects: borrowing Cursor, links: borrowing Cursor, _ id: ObjectID, into graph: inout Subgraph, boundary: Bool,
    model: Model
  ) throws -> Bool {
    let key = StoreKey.object(id)
    guard try objects.find(key) else { return false }
    let state = try objects.withCurrent { _, v in try ObjectState.decode(v, id: id, model: model) }
    let count = state.values.count
    guard graph.add(id, state: state, boundary: boundary) else { return true }
    var more = try links.seek(key)
    while more {
      let inside = try links.withCurrent { k, v -> Bool in
        guard KeyField.hasPrefix(k, key), let slot = LinkEntry.slot(k) else { return false }
        // Reverse entries of one-way relationships belong to the other object.
        guard !slot.isReverse, Int(slot.stored) < count else { return true }
        if let t = LinkEntry.target(key: k, value: v) { graph.appendTarget(t, rel: Int(slot.stored)) }
        return true
      }
      guard inside else { break }
      more = try links.next()
    }
    return true
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
    for m in 0..<count {
      let e = states[m].entity
      guard Int(e.rawValue) < relationships.count else { continue }
      for shape in relationships[Int(e.rawValue)] where policies.policy(e, shape.id) == .reference {
        for k in range(m, shape.id) where index(of: targets[k]) == nil {
          let t = targets[k]
          // Names are looked up only for the error.
          guard case .relationship(let r)? = model.entity(e)?.property(shape.id)?.kind else { continue }
          let (object, target) = (reader.objectName(ids[m]), reader.objectName(t))
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
