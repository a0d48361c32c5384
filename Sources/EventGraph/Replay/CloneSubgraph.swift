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
  private var positions: [ObjectID: Int] = [:]

  init(root: ObjectID?) { self.root = root }

  var count: Int { ids.count }

  /// The member's index in ``ids``; `nil` for an object outside the subgraph.
  func index(of id: ObjectID) -> Int? { positions[id] }

  mutating func add(_ id: ObjectID, _ version: ObjectVersion, boundary isBoundary: Bool = false) {
    guard positions[id] == nil else { return }
    positions[id] = ids.count
    ids.append(id)
    versions.append(version)
    if isBoundary { boundary.insert(id) }
  }

  /// Makes a boundary object a full member; false when it was one already.
  mutating func promote(_ id: ObjectID) -> Bool { boundary.remove(id) != nil }
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
    while next < queue.count {
      let v = graph.versions[queue[next]]
      next += 1
      guard let entity = model.entity(v.state.entity) else { continue }
      for r in entity.relationships {
        guard let targets = v.relationships[r.id] else { continue }
        let policy = policies.policy(entity.id, r.id)
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
    for v in versions {
      guard let entity = model.entity(v.state.entity) else { continue }
      for r in entity.relationships where policies.policy(entity.id, r.id) == .reference {
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
