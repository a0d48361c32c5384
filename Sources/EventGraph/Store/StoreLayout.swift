import LMDB

/// The named LMDB databases of a store (Docs/store-layout.md).
struct StoreDatabases: Sendable {
  /// name → UTF-8 value: format, store ID, active model version.
  let meta: Database
  /// model version (u32 BE) → model document (JSON).
  let models: Database
  /// first sequence (u64 BE) → commit record, for the active model version.
  let log: Database
  /// object → entity and attribute values.
  let objects: Database
  /// object → entity (u16 BE), kept after a delete, so identities are never reused.
  let identities: Database
  /// (object, relationship[, position or target]) → target or ∅: both sides of every link.
  let links: Database
  /// (entity, object) → ∅.
  let entities: Database
  /// (object, first sequence of a commit that touched it) → ∅.
  let history: Database
  /// idempotency key → first sequence of the commit that carried it.
  let dedupe: Database

  static let projectionNames = ["objects", "identities", "links", "entities", "history", "dedupe"]

  static func logName(version: Int) -> String { "log.v\(version)" }

  /// Opens (creating when `create`) the databases for `version`'s log.
  static func open(_ env: Environment, version: Int, create: Bool) throws(LMDBError) -> StoreDatabases? {
    func db(_ name: String) throws(LMDBError) -> Database? { try env.openDatabase(name, create: create) }
    guard let meta = try db("meta"), let models = try db("models"), let log = try db(logName(version: version)),
      let objects = try db("objects"), let identities = try db("identities"), let links = try db("links"),
      let entities = try db("entities"), let history = try db("history"), let dedupe = try db("dedupe")
    else { return nil }
    return StoreDatabases(
      meta: meta, models: models, log: log, objects: objects, identities: identities, links: links,
      entities: entities, history: history, dedupe: dedupe)
  }

  /// The projection databases, in a fixed order (rebuild and verify walk them).
  var projections: [(name: String, db: Database)] {
    [
      ("objects", objects), ("identities", identities), ("links", links), ("entities", entities),
      ("history", history), ("dedupe", dedupe),
    ]
  }
}

/// Keys of the `meta` database.
enum MetaKey {
  static let format = "format"
  static let storeID = "storeID"
  static let activeVersion = "activeVersion"
  /// Present while a rebuild is under way; a store left with it needs a rebuild.
  static let rebuilding = "rebuilding"
}
