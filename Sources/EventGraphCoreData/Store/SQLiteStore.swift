import Foundation

/// A Core Data SQLite store opened read-only: its entities (`Z_PRIMARYKEY`), metadata
/// (`Z_METADATA`), and tables with their columns.
struct SQLiteStore {
  let db: SQLiteDatabase
  let entities: [StoreEntity]
  /// Table → column names, as `PRAGMA table_info` gives them.
  let tables: [String: [String]]
  /// The entity names of `NSStoreModelVersionHashes`, and the store's UUID.
  let hashedEntities: Set<String>?
  let uuid: String?

  var file: String { db.path }

  init(path: String) throws(CoreDataError) {
    db = try SQLiteDatabase(readOnly: path)
    var tables: [String: [String]] = [:]
    let names = try db.query("SELECT name FROM sqlite_master WHERE type = 'table'")
    var tableNames: [String] = []
    while try names.next() { tableNames.append(names.text(0)) }
    for t in tableNames {
      let info = try db.query("PRAGMA table_info(\(Self.quote(t)))")
      var columns: [String] = []
      while try info.next() { columns.append(info.text(1)) }
      tables[t] = columns
    }
    self.tables = tables
    guard tables["Z_PRIMARYKEY"] != nil else {
      throw CoreDataError(file: path, "table Z_PRIMARYKEY: missing, so this is not a Core Data store")
    }
    var entities: [StoreEntity] = []
    let rows = try db.query("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
    while try rows.next() {
      entities.append(StoreEntity(number: rows.int(0), name: rows.text(1), superNumber: rows.int(2), max: rows.int(3)))
    }
    self.entities = entities
    var hashed: Set<String>? = nil
    var uuid: String? = nil
    if tables["Z_METADATA"] != nil {
      let meta = try db.query("SELECT Z_UUID, hex(Z_PLIST) FROM Z_METADATA ORDER BY Z_VERSION DESC LIMIT 1")
      if try meta.next() {
        uuid = meta.text(0).isEmpty ? nil : meta.text(0)
        let plist = meta.text(1)
        if !plist.isEmpty {
          let metadata: PlistValue
          do {
            metadata = try XMLPlist.read(Self.bytes(hex: plist))
          } catch {
            throw CoreDataError(file: path, "table Z_METADATA: Z_PLIST is not a property list: \(error)")
          }
          hashed = (metadata["NSStoreModelVersionHashes"]?.dictionary).map { Set($0.map(\.key)) }
          uuid = metadata["NSStoreUUID"]?.string ?? uuid
        }
      }
    }
    self.hashedEntities = hashed
    self.uuid = uuid
  }

  /// The layout of a model version in this store, or why it does not fit.
  ///
  /// An entity renamed in the model through a renaming identifier (`elementID`) keeps its
  /// old name in a store that was not migrated — in `Z_PRIMARYKEY`, its table's name and
  /// the metadata's version hashes — as Core Data keeps it (an entity's version hash is
  /// taken from its renaming identifier): such a store is read with the version, by the
  /// old names, and its objects named by the new ones.
  func layout(_ version: CoreDataModelVersion, stored: Set<String>) -> Result<SQLiteLayout, LayoutMismatch> {
    let names = Set(version.model.entities.map(\.name))
    // The version's entities by the name a store keeps for each: new name → old name.
    var storedName: [String: String] = [:]
    for e in version.model.entities {
      if let old = e.renamingIdentifier, old != e.name, !names.contains(old) { storedName[e.name] = old }
    }
    let renamed = Dictionary(storedName.map { ($0.value, $0.key) }, uniquingKeysWith: { a, _ in a })
    if let hashed = hashedEntities, hashed != names, Set(hashed.map { renamed[$0] ?? $0 }) != names {
      return .failure(
        LayoutMismatch(reasons: [
          "Z_METADATA's model names the entities \(hashed.sorted().joined(separator: ", ")), not this version's"
        ]))
    }
    // Read by the new names where the store has only the old ones.
    let storeNames = Set(entities.map(\.name))
    let renames = renamed.filter { storeNames.contains($0.key) && !storeNames.contains($0.value) }
    let seen = entities.map { e in
      StoreEntity(number: e.number, name: renames[e.name] ?? e.name, superNumber: e.superNumber, max: e.max)
    }
    let tableOf = Dictionary(renames.map { ($0.value, "Z" + $0.key.uppercased()) }, uniquingKeysWith: { a, _ in a })
    var result = SQLiteLayout.make(version.model, stored: stored, entities: seen, tables: tables, tableOf: tableOf)
    if case .success(var l) = result, !renames.isEmpty {
      for (old, new) in renames.sorted(by: { $0.key < $1.key }) {
        l.notes.append("entity \(new): the store names it \(old), its renaming identifier (the store was not migrated)")
      }
      result = .success(l)
    }
    return result
  }

  /// A name quoted for SQL.
  static func quote(_ name: String) -> String {
    "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
  }

  /// The bytes of SQLite's `hex()` text.
  static func bytes(hex: String) -> [UInt8] {
    var result: [UInt8] = []
    result.reserveCapacity(hex.utf8.count / 2)
    var high: UInt8? = nil
    for c in hex.utf8 {
      let v: UInt8 = c >= 65 ? c - 55 : c - 48
      if let h = high {
        result.append(h << 4 | v)
        high = nil
      } else {
        high = v
      }
    }
    return result
  }
}
