import LMDB

/// A subgraph read from a store, ready to be replayed: each object's version (values and
/// relationships, now or as of a sequence), in the order it was found, the root first.
struct Subgraph: Sendable {
  /// `nil` for a whole store.
  let root: ObjectID?
  private(set) var ids: [ObjectID] = []
  private(set) var versions: [ObjectVersion] = []
  /// Objects included only because a member references them (snapshots keep them so
  /// that references stay meaningful); a clone has none.
  private(set) var boundary: Set<ObjectID> = []
  private var positions = IdentityTable()

  init(root: ObjectID?) { self.root = root }

  var count: Int { ids.count }

  /// The member's index in ``ids``; `nil` for an object outside the subgraph.
  func index(of id: ObjectID) -> Int? { positions[id] }

  mutating func add(_ id: ObjectID, _ version: ObjectVersion, boundary isBoundary: Bool = false) {
    guard positions.insert(id, ids.count) else { return }
    ids.append(id)
    versions.append(version)
    if isBoundary { boundary.insert(id) }
  }

  /// Makes a boundary object a full member; false when it was one already.
  mutating func promote(_ id: ObjectID) -> Bool { boundary.remove(id) != nil }
}

/// Identities to small integers: an open-addressing table with a multiplicative hash,
/// several times cheaper than `Dictionary` with `Hasher` for the millions of lookups a
/// large clone makes.
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

  @inline(__always)
  private func slot(_ key: UInt64) -> Int {
    Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 32) & mask
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
  /// - Throws: ``StoreError/sequenceBeyondLog(sequence:last:)``.
  static func resolve(_ asOf: UInt64?, reader: GraphReader<T>) throws -> UInt64? {
    guard let asOf else { return nil }
    let last = try reader.logEnd().sequence
    guard asOf <= last else { throw StoreError.sequenceBeyondLog(sequence: asOf, last: last) }
    return asOf == last ? nil : asOf
  }

  /// The root's version, or an error that says why there is none.
  ///
  /// - Throws: ``StoreError/noSuchObject(_:)`` for an identity the store never gave,
  ///   ``StoreError/deletedObject(_:asOf:)`` for one that is not live (then).
  mutating func requireRoot(_ root: ObjectID) throws -> (Entity, ObjectVersion) {
    guard let e = try entity(of: root), let entity = model.entity(e) else {
      throw StoreError.noSuchObject("#\(root.rawValue)")
    }
    guard let v = try version(root) else { throw StoreError.deletedObject(reader.display(root), asOf: asOf) }
    return (entity, v)
  }

  /// Collects the objects reachable from the root along `deep` relationships, breadth
  /// first (relationships in model order, targets in list order), reading each once.
  ///
  /// - Parameter references: also include the targets of `reference` relationships,
  ///   without following them (a snapshot's boundary).
  mutating func collect(
    root: ObjectID, rootVersion: ObjectVersion, policies: CopyPolicyTable, references: Bool = false
  ) throws -> Subgraph {
    var graph = Subgraph(root: root)
    graph.add(root, rootVersion)
    var queue = [0]
    var next = 0
    let relationships = model.entities.map(\.relationships)
    while next < queue.count {
      let v = graph.versions[queue[next]]
      next += 1
      let e = v.state.entity
      guard Int(e.rawValue) < relationships.count else { continue }
      for r in relationships[Int(e.rawValue)] {
        guard let targets = v.relationships[r.id] else { continue }
        let policy = policies.policy(e, r.id)
        guard policy == .deep || (references && policy == .reference) else { continue }
        for t in targets {
          if let i = graph.index(of: t) {
            // Found by reference first, reached deep now: a member after all.
            if policy == .deep, graph.promote(t) { queue.append(i) }
            continue
          }
          guard let tv = try version(t) else {
            throw StoreError.corrupt("\(reader.display(v.state.id)).\(r.name) names \(reader.display(t)), which does not exist")
          }
          graph.add(t, tv, boundary: policy == .reference)
          if policy == .deep { queue.append(graph.count - 1) }
        }
      }
    }
    return graph
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
    let relationships = model.entities.map(\.relationships)
    for v in versions {
      let e = v.state.entity
      guard Int(e.rawValue) < relationships.count else { continue }
      for r in relationships[Int(e.rawValue)] where policies.policy(e, r.id) == .reference {
        for t in v.relationships[r.id] ?? [] where index(of: t) == nil {
          let (object, target) = (reader.display(v.state.id), reader.display(t))
          if crossStore {
            throw StoreError.referenceOutsideStore(object: object, relationship: r.name, target: target)
          }
          if let back = r.inverseRelationship(in: model), !back.isToMany {
            throw StoreError.referenceWouldMove(object: object, relationship: r.name, target: target, inverse: back.name)
          }
          if try reader.object(t) == nil {
            throw StoreError.referenceToDeleted(object: object, relationship: r.name, target: target)
          }
        }
      }
    }
  }
}
