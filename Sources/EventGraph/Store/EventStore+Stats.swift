import Foundation
internal import LMDB

/// Figures about a store, for `eventtool stats`.
public struct StoreStatistics: Sendable, Hashable {
  public var path: String
  public var storeID: String
  public var modelName: String
  public var modelVersion: Int
  /// Every model version the store holds, in order, with its content hash
  /// (``Model/contentHash``: the one written with it, or for a store written before there
  /// were hashes, the hash of its document).
  public var models: [(version: Int, name: String, hash: String)]
  public var commits: UInt64
  public var events: UInt64
  /// Live objects per entity (exact entity, not counting sub-entities twice), by name.
  public var objectsPerEntity: [(entity: String, count: Int)]
  /// Entries per LMDB database, by name.
  public var databases: [(name: String, entries: Int, pages: Int)]
  public var mapSize: Int
  /// The size of the data file: the pages in use, and with durable commits up to one and a
  /// half ``StoreOptions/fileReserve`` of zeros written past them.
  public var fileSize: Int
  /// The bytes of the pages in use.
  public var usedSize: Int
  /// The pages on LMDB's free list: freed by earlier writes, reused by later ones, inside
  /// the pages in use (``EventStore/compact(at:dropVersionsBefore:droppingRollbackVersion:)``
  /// gives them back).
  public var freePages: Int = 0
  /// The size of a page, in bytes.
  public var pageSize: Int = 4096
  /// The store's directory and files that others may read, enter or write, a sentence each
  /// (a store's directory should be mode 0700, its files 0600); empty when none.
  public var openToOthers: [String] = []
  /// The retention policy recorded in the store (``EventStore/retentionPolicy()``).
  public var retention: RetentionPolicy?
  /// Where a truncated log's base stands: its commit number, the last sequence it holds and
  /// when it was made; `nil` for a log never truncated.
  public var base: (commit: UInt64, lastSequence: UInt64, truncatedAt: Date)?
  /// History entries (commits that touched an object) per entity, by name: the history
  /// each entity keeps.
  public var historyPerEntity: [(entity: String, entries: Int)] = []

  public static func == (a: Self, b: Self) -> Bool {
    a.path == b.path && a.commits == b.commits && a.events == b.events
      && a.objectsPerEntity.map(\.count) == b.objectsPerEntity.map(\.count)
  }
  public func hash(into h: inout Hasher) {
    h.combine(path)
    h.combine(events)
  }
}

extension EventStore {
  /// Counts of the log, the objects per entity and every database.
  public func statistics() throws -> StoreStatistics {
    let info = env.info
    let file = (try? FileManager.default.attributesOfItem(atPath: path + "/data.mdb")[.size] as? Int) ?? 0
    return try read { s in
      let end = try s.logEnd()
      var perEntity: [(String, Int)] = []
      for e in model.entities {
        perEntity.append((e.name, try s.reader.objects(ofExactly: e.id).count))
      }
      var databases: [(String, Int, Int)] = []
      let named: [(String, Database)] =
        [("meta", dbs.meta), ("models", dbs.models), ("log", dbs.log)] + dbs.projections
      for (name, db) in named {
        let st = try s.reader.txn.statistics(db)
        databases.append((name, st.entries, st.branchPages + st.leafPages + st.overflowPages))
      }
      var models: [(Int, String, String)] = []
      var documents: [(Int, [UInt8])] = []
      try s.reader.txn.forEach(dbs.models) { k, v in
        if let version = KeyField.u64(k, at: 0) { documents.append((Int(version), [UInt8](v))) }
        return true
      }
      for (version, doc) in documents {
        let m = try Model(json: doc, file: "\(path) (stored model v\(version))")
        models.append((version, m.name, try dbs.storedModelHash(version, s.reader.txn) ?? m.contentHash))
      }
      var st = StoreStatistics(
        path: path, storeID: storeID, modelName: model.name, modelVersion: model.version, models: models,
        commits: end.commit,
        events: end.sequence, objectsPerEntity: perEntity, databases: databases, mapSize: info.mapSize,
        fileSize: file, usedSize: info.usedSize, freePages: try s.reader.txn.freePages(), pageSize: info.pageSize,
        openToOthers: StoreFiles.openToOthers(at: path))
      st.retention = try Self.retentionPolicy(in: s.reader.txn, meta: dbs.meta, path: path)
      st.base = try s.reader.logBase().map { ($0.number, $0.base.lastSequence, $0.base.truncatedAt) }
      st.historyPerEntity = try Self.historyPerEntity(s.reader)
      return st
    }
  }

  /// The history entries of each entity's objects, in the model's order.
  private static func historyPerEntity(_ reader: GraphReader<ReadHandle>) throws -> [(entity: String, entries: Int)] {
    var counts = [Int](repeating: 0, count: reader.model.entities.count)
    var object: UInt64? = nil
    var entity: Int? = nil
    try reader.txn.forEach(reader.dbs.history) { k, _ in
      let o = KeyField.u64(k, at: 0) ?? 0
      if o != object {
        object = o
        entity = try reader.entity(of: ObjectID(o)).map { Int($0.rawValue) }
      }
      if let entity, entity < counts.count { counts[entity] += 1 }
      return true
    }
    return zip(reader.model.entities, counts).map { ($0.name, $1) }
  }
}
