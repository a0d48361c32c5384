import EventGraph

/// A Core Data object's place in its store: the table of its inheritance root (an XML
/// store has one) and its primary key there.
struct ObjectKey: Hashable {
  let table: Int
  let row: Int64
}

/// An object read from a Core Data store, ready to insert.
struct PendingObject {
  let key: ObjectKey
  let entity: Entity
  let values: [(Attribute, Value?)]
  /// To-one links: relationship name and target.
  let links: [(String, ObjectKey)]
}

/// Identities by primary key, in pages of 4,096 so that a table's map costs 8 bytes a row
/// and none for keys never used.
struct IdentityTable {
  private var pages: [Int64: [UInt64]] = [:]

  subscript(row: Int64) -> ObjectID? {
    get {
      guard let page = pages[row >> 12] else { return nil }
      let raw = page[Int(row & 4095)]
      return raw == 0 ? nil : ObjectID(raw)
    }
    set {
      pages[row >> 12, default: [UInt64](repeating: 0, count: 4096)][Int(row & 4095)] = newValue?.rawValue ?? 0
    }
  }
}

/// Writes a Core Data store's objects and links through the store's write API, a batch per
/// commit: each batch's rows are read first, so a commit that must run again (the map
/// grew) runs over the same rows.
final class ObjectSink {
  let store: EventStore
  let batchSize: Int
  private var ids: [Int: IdentityTable] = [:]
  private var objects: [PendingObject] = []
  private var links: [(ObjectKey, String, ObjectKey, position: Int?)] = []
  /// Links whose target had no identity yet when their source was written.
  private var deferred: [(ObjectKey, String, ObjectKey)] = []
  private(set) var commits = 0
  private(set) var counts: [String: Int] = [:]
  /// Called after each commit for each object it made.
  let made: (ObjectKey, String, ObjectID) -> Void

  init(store: EventStore, batchSize: Int, made: @escaping (ObjectKey, String, ObjectID) -> Void) {
    self.store = store
    self.batchSize = batchSize
    self.made = made
  }

  func identity(_ key: ObjectKey) -> ObjectID? { ids[key.table]?[key.row] }

  func add(_ object: PendingObject) throws {
    objects.append(object)
    if objects.count >= batchSize { try flush() }
  }

  func addLink(_ source: ObjectKey, _ relationship: String, _ target: ObjectKey, position: Int? = nil) throws {
    links.append((source, relationship, target, position))
    if links.count >= batchSize * 4 { try flush() }
  }

  /// Commits what is pending: the objects with their to-one links, then the links.
  func flush(checkpoint: Checkpoint? = nil) throws {
    guard !objects.isEmpty || !links.isEmpty || checkpoint != nil else { return }
    let batch = objects
    let linkBatch = links
    // Identities are recorded as they are given, so links within the batch find them; a
    // run again (the map grew) gives and records them anew.
    let result = try store.write { tx in
      var later: [(ObjectKey, String, ObjectKey)] = []
      for p in batch {
        ids[p.key.table, default: IdentityTable()][p.key.row] = try tx.insert(p.entity, values: p.values)
      }
      for p in batch where !p.links.isEmpty {
        guard let source = identity(p.key) else { continue }
        for (name, target) in p.links {
          if let t = identity(target) {
            try tx.link(source, name, t)
          } else {
            later.append((p.key, name, target))
          }
        }
      }
      for (s, name, t, position) in linkBatch {
        guard let source = identity(s), let target = identity(t) else {
          throw CoreDataError(file: "", "a link from \(s.row) to \(t.row) names an object that was not written")
        }
        try tx.link(source, name, target, at: position)
      }
      if let checkpoint { try tx.setCheckpoint(checkpoint) }
      return later
    }
    commits += 1
    for p in batch {
      counts[p.entity.name, default: 0] += 1
      if let id = identity(p.key) { made(p.key, p.entity.name, id) }
    }
    deferred.append(contentsOf: result.value ?? [])
    objects.removeAll(keepingCapacity: true)
    links.removeAll(keepingCapacity: true)
  }

  /// Queues the links that waited for a later object, once every object is read: the
  /// next commit makes them (their targets are written by then, or in that commit).
  func linkDeferred() throws {
    let waiting = deferred
    deferred = []
    for (s, name, t) in waiting { try addLink(s, name, t) }
  }
}
