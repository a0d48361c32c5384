internal import CLMDB

/// A handle to a named database inside an environment.
///
/// Valid for the environment's life.
public struct Database: Sendable, Hashable {
  let dbi: MDB_dbi
  /// Whether every value carries a checksum (``DatabaseFlags/checksummed``).
  let checksummed: Bool
  /// The name it was opened by, for messages (`nil` for the main database).
  let name: String?

  init(dbi: MDB_dbi, flags: DatabaseFlags = [], name: String? = nil) {
    self.dbi = dbi
    self.checksummed = flags.contains(.checksummed)
    self.name = name
  }
}

/// Flags for opening a database.
public struct DatabaseFlags: OptionSet, Sendable, Hashable {
  public let rawValue: UInt32
  public init(rawValue: UInt32) { self.rawValue = rawValue }
  /// Several sorted values per key.
  public static let duplicateSort = DatabaseFlags(rawValue: UInt32(MDB_DUPSORT))
  /// Keys are native-endian unsigned integers (we use big-endian byte keys instead).
  public static let integerKey = DatabaseFlags(rawValue: UInt32(MDB_INTEGERKEY))
  /// Not LMDB's: every value is stored with a CRC-32C of its key and value.
  ///
  /// The checksum is added by every put and checked by every read, which sees the value
  /// without it. A mismatch is an
  /// ``LMDBError`` whose ``LMDBError/damage`` names the database and key. Every handle of a
  /// database must be opened with the same choice.
  public static let checksummed = DatabaseFlags(rawValue: 1 << 31)

  /// The flags LMDB itself knows.
  var lmdb: UInt32 { rawValue & ~DatabaseFlags.checksummed.rawValue }
}

/// Flags for one put.
public struct PutFlags: OptionSet, Sendable, Hashable {
  public let rawValue: UInt32
  public init(rawValue: UInt32) { self.rawValue = rawValue }
  /// Fail with ``LMDBError/keyExists`` if the key is present.
  public static let noOverwrite = PutFlags(rawValue: UInt32(MDB_NOOVERWRITE))
  /// The key sorts after every key in the database: no page splits, no search.
  public static let append = PutFlags(rawValue: UInt32(MDB_APPEND))
  /// For duplicate-sorted databases: fail if this key/value pair exists.
  public static let noDuplicateData = PutFlags(rawValue: UInt32(MDB_NODUPDATA))
}

/// Counts of a database's B-tree.
public struct DatabaseStatistics: Sendable, Hashable {
  public let entries: Int
  public let depth: Int
  public let branchPages: Int
  public let leafPages: Int
  public let overflowPages: Int
  public let pageSize: Int
}
