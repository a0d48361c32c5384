internal import LMDB

/// The named LMDB databases of a store (Docs/store-layout.md).
///
/// `meta` and `models` are shared; the log and every projection belong to one model
/// version (`log.v2`, `objects.v2`, …), so that an upcast can build the next version's
/// log and projections beside the current ones and switch in one atomic step, and a
/// rollback is a switch back. A `prefix` names scratch copies (an upcast's source state).
struct StoreDatabases: Sendable {
  /// name → UTF-8 value: format, store ID, active model version.
  let meta: Database
  /// model version (u32 BE) → model document (JSON).
  let models: Database
  /// first sequence (u64 BE) → commit record.
  let log: Database
  /// object → entity and attribute values.
  let objects: Database
  /// object → entity (u16 BE), kept after a delete, so identities are never reused.
  let identities: Database
  /// (object, relationship, target or order key) → ∅ or target: both sides of every link.
  let links: Database
  /// (object, relationship, target) → order key, and (object, relationship) → length: the
  /// members of ordered lists (Projection/OrderedLinks.swift).
  let members: Database
  /// (entity, object) → ∅.
  let entities: Database
  /// (object, first sequence of a commit that touched it) → ∅.
  let history: Database
  /// idempotency key → first sequence of the commit that carried it.
  let dedupe: Database
  /// (entity, attribute, order-preserving value, object) → ∅, for `indexed` attributes.
  let index: Database
  /// (entity, constraint, values) → object, and (object, entity, constraint) → its key.
  ///
  /// For uniqueness constraints (``UniquenessIndex``); `nil` only in a store made before
  /// there were any, opened read-only: its models have none.
  let unique: Database?
  let version: Int
  let prefix: String
  /// The store's keys for personal data, shared by every version (Privacy/Keyring.swift);
  /// `nil` for a store that keeps none.
  var keyring: Keyring? = nil

  static let projectionNames = [
    "objects", "identities", "links", "entities", "history", "dedupe", "index", "unique", "members",
  ]
  /// Whether the database named `name` is a projection, whose values carry checksums
  /// (any version's, an upcast's scratch copies included).
  @Sendable static func isChecksummed(_ name: String) -> Bool {
    guard let dot = name.lastIndex(of: "."), name[name.index(after: dot)...].hasPrefix("v") else { return false }
    let base = name[..<dot].split(separator: ".").last.map(String.init) ?? ""
    return projectionNames.contains(base)
  }

  /// The databases every version has: its log and its projections.
  static let versionedNames = ["log"] + projectionNames

  static func name(_ base: String, version: Int, prefix: String = "") -> String {
    "\(prefix)\(base).v\(version)"
  }

  /// Opens (creating when `create`) the databases of `version`.
  static func open(_ env: Environment, version: Int, prefix: String = "", create: Bool) throws(LMDBError)
    -> StoreDatabases?
  {
    func db(_ name: String, _ flags: DatabaseFlags = []) throws(LMDBError) -> Database? {
      try env.openDatabase(name, flags: flags, create: create)
    }
    // Every projection's values carry a checksum of their key and value: a damaged entry
    // is found when read, never served (the log's records carry their own).
    func versioned(_ base: String) throws(LMDBError) -> Database? {
      try db(name(base, version: version, prefix: prefix), base == "log" ? [] : .checksummed)
    }
    guard let meta = try db("meta"), let models = try db("models"), let log = try versioned("log"),
      let objects = try versioned("objects"), let identities = try versioned("identities"),
      let links = try versioned("links"), let entities = try versioned("entities"),
      let history = try versioned("history"), let dedupe = try versioned("dedupe"), let index = try versioned("index"),
      let members = try versioned("members")
    else { return nil }
    return StoreDatabases(
      meta: meta, models: models, log: log, objects: objects, identities: identities, links: links,
      members: members, entities: entities, history: history, dedupe: dedupe, index: index,
      unique: try versioned("unique"), version: version, prefix: prefix)
  }

  /// The checks made before every commit: no rebuild left unfinished, and the active
  /// model version still the one `model` is (another handle or process may have upcast
  /// or rolled back the store since this one was opened).
  func checkWritable(_ txn: WriteHandle, model: Model, path: String) throws {
    try checkNoRebuild(txn)
    try checkActive(txn, model: model, path: path)
    try checkRole(txn, path: path)
  }

  /// Refuses a store that an interrupted rebuild left with incomplete projections.
  func checkNoRebuild(_ txn: WriteHandle) throws {
    if try txn.contains(meta, key: MetaKey.rebuilding) {
      throw StoreError.corrupt("an interrupted rebuild left the projections incomplete: run rebuild first")
    }
  }

  /// Refuses when the active version is no longer `model`'s.
  func checkActive(_ txn: WriteHandle, model: Model, path: String) throws {
    let active = try txn.activeVersion(in: meta)
    guard active == model.version else {
      throw StoreError.versionChanged(path: path, opened: model.version, active: active ?? 0)
    }
  }

  /// Refuses writes of a read replica and of a fenced former primary (``ReplicationRole``).
  func checkRole(_ txn: WriteHandle, path: String) throws {
    guard let role = try txn.get(meta, key: MetaKey.role).flatMap(ReplicationRole.init(stored:)) else { return }
    switch role.kind {
    case .primary: break
    case .replica: throw StoreError.replica(path: path, stream: role.stream)
    case .fenced: throw StoreError.fenced(path: path, stream: role.stream, detail: role.detail)
    }
  }

  /// The projection databases, in a fixed order (rebuild and verify walk them); `unique`
  /// last, and only where it exists.
  var projections: [(name: String, db: Database)] {
    [
      ("objects", objects), ("identities", identities), ("links", links), ("entities", entities),
      ("history", history), ("dedupe", dedupe), ("index", index), ("members", members),
    ] + (unique.map { [("unique", $0)] } ?? [])
  }
}

/// Reading and writing the `meta` database's numbers (stored as decimal text).
extension TransactionReading where Self: ~Copyable {
  /// The number stored under `key` of `meta`; `nil` when it is absent or not a number.
  func metaNumber(_ meta: Database, _ key: String) throws -> Int? {
    try withValue(meta, key: key) { MetaKey.number($0) } ?? nil
  }

  /// The active model version: the one the projections are of and writes go to; `nil`
  /// in a store that names none (a damaged one, or one still being created).
  func activeVersion(in meta: Database) throws -> Int? { try metaNumber(meta, MetaKey.activeVersion) }
}

extension TransactionWriting where Self: ~Copyable {
  /// Makes `version` the active model version.
  func setActiveVersion(_ version: Int, in meta: Database) throws {
    try put(meta, key: MetaKey.activeVersion, value: String(version))
  }
}

/// Keys of the `meta` database.
enum MetaKey {
  /// A number as `meta` stores it (decimal text); `nil` when the bytes are not one.
  static func number(_ bytes: some Collection<UInt8>) -> Int? { Int(String(decoding: bytes, as: UTF8.self)) }

  static let format = "format"
  static let storeID = "storeID"
  static let activeVersion = "activeVersion"
  /// Present while a rebuild is under way; a store left with it needs a rebuild.
  static let rebuilding = "rebuilding"
  /// The store's part in replication (``ReplicationRole``); absent for a store on its own.
  static let role = "replication.role"
  /// The process ID of the upcast building a version, written when it starts (for the
  /// refusal of a second one to name it; the lock itself is ``VersionBuild/builderLockByte``).
  static let upcastBuilder = "upcast.builder"
}
