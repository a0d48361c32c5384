internal import CLMDB

/// An error returned by LMDB, with its code and LMDB's own message.
///
/// New codes can appear without breaking callers: compare with the static constants
/// (`error == .mapFull`) rather than switching exhaustively. "Not found" is never an
/// error at this API: reads return `nil` instead.
public struct LMDBError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The LMDB or `errno` code.
  public let code: Int32
  /// What the operation was, for the message.
  public let operation: String
  /// What ``PageCheck`` found wrong in the data file, when that is why (``corrupted``).
  public let damage: FileDamage?

  public init(code: Int32, operation: String) {
    self.code = code
    self.operation = operation
    self.damage = nil
  }

  /// The error of an environment whose data file is damaged.
  public init(damage: FileDamage) {
    self.code = MDB_CORRUPTED
    self.operation = "open"
    self.damage = damage
  }

  public var description: String {
    if let damage { return damage.description }
    let message = String(cString: mdb_strerror(code))
    // LMDB reports a write that came up short, which is what a full disk usually gives a
    // commit, as EIO rather than ENOSPC.
    let hint = self == .ioError ? "; LMDB says this of a short write too: the disk may be full" : ""
    return "LMDB \(operation) failed: \(message) (code \(code))\(hint)"
  }

  public static func == (a: LMDBError, b: LMDBError) -> Bool { a.code == b.code }
  public func hash(into hasher: inout Hasher) { hasher.combine(code) }

  public static let keyExists = LMDBError(code: MDB_KEYEXIST, operation: "")
  public static let notFound = LMDBError(code: MDB_NOTFOUND, operation: "")
  public static let corrupted = LMDBError(code: MDB_CORRUPTED, operation: "")
  public static let panic = LMDBError(code: MDB_PANIC, operation: "")
  public static let versionMismatch = LMDBError(code: MDB_VERSION_MISMATCH, operation: "")
  public static let invalid = LMDBError(code: MDB_INVALID, operation: "")
  public static let mapFull = LMDBError(code: MDB_MAP_FULL, operation: "")
  public static let databasesFull = LMDBError(code: MDB_DBS_FULL, operation: "")
  public static let readersFull = LMDBError(code: MDB_READERS_FULL, operation: "")
  public static let transactionFull = LMDBError(code: MDB_TXN_FULL, operation: "")
  public static let mapResized = LMDBError(code: MDB_MAP_RESIZED, operation: "")
  public static let incompatible = LMDBError(code: MDB_INCOMPATIBLE, operation: "")
  public static let badTransaction = LMDBError(code: MDB_BAD_TXN, operation: "")
  /// A transaction used after the owner that shares it ended it (LMDB's `MDB_BAD_TXN`, so
  /// equal to ``badTransaction``).
  public static let transactionEnded = LMDBError(code: MDB_BAD_TXN, operation: "use of an ended transaction")
  public static let badValueSize = LMDBError(code: MDB_BAD_VALSIZE, operation: "")
  public static let badDatabase = LMDBError(code: MDB_BAD_DBI, operation: "")
  /// `ENOENT`: the environment's directory or files do not exist.
  public static let noSuchFile = LMDBError(code: 2, operation: "")
  /// `EACCES`: not allowed (for example writing to a read-only environment).
  public static let permissionDenied = LMDBError(code: 13, operation: "")
  /// `EIO`: a read or write failed, or a write came up short (a full disk, most often).
  public static let ioError = LMDBError(code: 5, operation: "")
  /// `ENOSPC`: no space left on the device.
  public static let noSpace = LMDBError(code: 28, operation: "")
}

/// The one choke point for LMDB return codes: success passes, anything else throws.
@inline(__always)
@usableFromInline
func check(_ rc: Int32, _ operation: @autoclosure () -> String) throws(LMDBError) {
  if rc != 0 { throw LMDBError(code: rc, operation: operation()) }
}
