internal import LMDB

/// The model versions a store holds, each with its content hash (``Model/contentHash``):
/// `models` keeps the document, `meta` keeps `modelHash.vN`.
///
/// The hash is written with the document and checked whenever a stored version is taken up
/// again (the store opened, rolled back): a document that no longer hashes to what was
/// written is refused. Stores written before there were hashes have none for their
/// versions: the hash is computed from the stored document.
extension StoreDatabases {
  static func modelHashKey(_ version: Int) -> String { "modelHash.v\(version)" }

  /// Writes `model` as its version's document, with its hash.
  func putModel(_ model: Model, _ txn: borrowing some TransactionWriting & ~Copyable) throws {
    try txn.put(models, key: BigEndianKey(UInt64(model.version)), value: Array(model.jsonText.utf8))
    try txn.put(meta, key: Self.modelHashKey(model.version), value: model.contentHash)
  }

  /// The hash written for `version`, `nil` when none was (a store written before).
  func storedModelHash(_ version: Int, _ txn: borrowing some TransactionReading & ~Copyable) throws -> String? {
    try txn.get(meta, key: Self.modelHashKey(version)).map { String(decoding: $0, as: UTF8.self) }
  }

  /// Refuses a stored version whose document does not hash to the hash written with it.
  func checkModelHash(_ model: Model, _ txn: borrowing some TransactionReading & ~Copyable, path: String) throws {
    guard let stored = try storedModelHash(model.version, txn), stored != model.contentHash else { return }
    throw StoreError.modelHashMismatch(path: path, version: model.version, stored: stored, computed: model.contentHash)
  }

  /// The stored model of `version`, `nil` when the store has none.
  func storedModel(_ version: Int, _ txn: borrowing some TransactionReading & ~Copyable, path: String) throws -> Model?
  {
    guard let doc = try txn.get(models, key: BigEndianKey(UInt64(version))) else { return nil }
    return try Model(json: doc, file: "\(path) (stored model v\(version))")
  }
}
