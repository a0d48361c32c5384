internal import CLMDB
import Foundation

/// Flags for opening an environment (a subset of `mdb_env_open`'s).
public struct EnvironmentFlags: OptionSet, Sendable, Hashable {
  public let rawValue: UInt32
  public init(rawValue: UInt32) { self.rawValue = rawValue }

  /// Open read-only: every write transaction fails with ``LMDBError/permissionDenied``.
  public static let readOnly = EnvironmentFlags(rawValue: UInt32(MDB_RDONLY))
  /// Don't fsync the meta page on commit: atomic and consistent, may lose the last commits on an OS crash.
  public static let noMetaSync = EnvironmentFlags(rawValue: UInt32(MDB_NOMETASYNC))
  /// Don't fsync on commit at all: the OS decides; see ``Environment/sync(force:)``.
  public static let noSync = EnvironmentFlags(rawValue: UInt32(MDB_NOSYNC))
  /// Turn off read-ahead (better for random reads of stores larger than memory).
  public static let noReadAhead = EnvironmentFlags(rawValue: UInt32(MDB_NORDAHEAD))
  /// The path is a file, not a directory.
  public static let noSubdirectory = EnvironmentFlags(rawValue: UInt32(MDB_NOSUBDIR))
}

/// How to open an environment.
public struct EnvironmentOptions: Sendable {
  public var flags: EnvironmentFlags
  /// Initial map size in bytes; the map grows by itself when full.
  public var mapSize: Int
  public var maxDatabases: Int
  public var maxReaders: Int
  /// File mode for newly created files: the owner's alone by default (the store's data is
  /// nobody else's to read).
  public var mode: Int32
  /// Bytes of written zeros to keep past the pages in use (0, the default: none).
  ///
  /// Durable commits then seldom grow the file. See ``Environment/beginWrite()``.
  public var fileReserve: Int
  /// Walk every page of an existing data file before opening it (``PageCheck``).
  ///
  /// A damaged file is then reported instead of faulting a read. The meta pages and the file's
  /// length are checked whatever this says.
  public var checkPages: Bool
  /// With ``checkPages``, the named databases whose entries are checked against their
  /// checksums too (``DatabaseFlags/checksummed``).
  public var checksummedDatabases: (@Sendable (String) -> Bool)?

  public init(
    flags: EnvironmentFlags = [], mapSize: Int = 64 << 20, maxDatabases: Int = 32, maxReaders: Int = 126,
    mode: Int32 = 0o600, fileReserve: Int = 0, checkPages: Bool = false,
    checksummedDatabases: (@Sendable (String) -> Bool)? = nil
  ) {
    self.checkPages = checkPages
    self.checksummedDatabases = checksummedDatabases
    self.flags = flags
    self.mapSize = mapSize
    self.maxDatabases = maxDatabases
    self.maxReaders = maxReaders
    self.mode = mode
    self.fileReserve = fileReserve
  }
}

/// An LMDB environment: one directory holding one memory-mapped database file.
///
/// Safe to share between threads and tasks: read transactions are opened with
/// `MDB_NOTLS`, so one may be used on any thread (never two at once); write
/// transactions are serialized by LMDB and belong to the thread that began them, which
/// is why every API here is synchronous and closure-scoped.
///
/// ```swift
/// let env = try Environment(path: dir, options: .init(maxDatabases: 4))
/// let db = try env.openDatabase("things")
/// try env.write { txn in try txn.put(db, key: BigEndianKey(1), value: Array("one".utf8)) }
/// let one = try env.read { txn in try txn.get(db, key: BigEndianKey(1)) }
/// ```
public final class Environment: @unchecked Sendable {
  // SAFETY (@unchecked Sendable): `handle` is set once in init and freed in deinit; LMDB
  // allows concurrent use of one MDB_env from many threads with MDB_NOTLS. The map size is
  // only changed under `gate`, which excludes every transaction of this process.
  let handle: OpaquePointer
  let gate = TransactionGate()
  /// Held while the map is remapped, and while ``info`` reads the meta pages inside it:
  /// that read is part of no transaction, so `gate` alone does not keep the map in place.
  let mapLock = NSLock()
  public let path: String
  public let flags: EnvironmentFlags
  /// Zeros written ahead of the data (``EnvironmentOptions/fileReserve``), when asked for.
  let reserve: FileReserve?

  /// Opens (creating if needed) the environment at `path`, a directory unless
  /// ``EnvironmentFlags/noSubdirectory`` is given.
  ///
  /// - Throws: ``LMDBError`` (``LMDBError/noSuchFile`` when the directory is missing,
  ///   ``LMDBError/invalid`` when the file is not an LMDB environment).
  public init(path: String, options: EnvironmentOptions = .init()) throws(LMDBError) {
    let dataFile = options.flags.contains(.noSubdirectory) ? path : path + "/data.mdb"
    let checksummed = options.checksummedDatabases ?? { _ in false }
    // The meta pages and the length before LMDB maps the file; the trees once it is open,
    // under a read transaction (``checkPages(_:checksummed:)``).
    let existing = try Self.checkDataFile(dataFile)
    var env: OpaquePointer?
    try check(mdb_env_create(&env), "mdb_env_create")
    guard let env else { throw LMDBError(code: 12, operation: "mdb_env_create") }
    // Clean up the half-open handle on every failure below.
    do {
      try check(mdb_env_set_maxdbs(env, MDB_dbi(options.maxDatabases)), "mdb_env_set_maxdbs")
      try check(mdb_env_set_maxreaders(env, UInt32(options.maxReaders)), "mdb_env_set_maxreaders")
      try check(mdb_env_set_mapsize(env, options.mapSize), "mdb_env_set_mapsize")
      let flags = options.flags.rawValue | UInt32(MDB_NOTLS)
      try check(mdb_env_open(env, path, flags, mdb_mode_t(options.mode)), "mdb_env_open(\(path))")
    } catch {
      mdb_env_close(env)
      throw error
    }
    self.handle = env
    self.path = path
    self.flags = options.flags
    var st = MDB_stat()
    if options.fileReserve > 0, !options.flags.contains(.readOnly), mdb_env_stat(env, &st) == 0 {
      reserve = FileReserve(size: options.fileReserve, pageSize: Int(st.ms_psize))
    } else {
      reserve = nil
    }
    // Readers left behind by processes that died would pin old pages forever.
    _ = try? clearStaleReaders()
    // Thrown here, the environment is closed by `deinit`.
    if existing && options.checkPages { try checkPages(dataFile, checksummed: checksummed) }
  }

  /// Walks every tree of the data file as one read transaction of this environment sees it.
  ///
  /// The walk reads the file, not the map, while writers in other processes may commit: an
  /// open read transaction keeps them from reusing the pages of its snapshot, so the walk
  /// reads one consistent set of trees (without it, a page freed and rewritten during the
  /// walk looked like damage). Beginning a read transaction reads only the meta pages,
  /// which ``checkDataFile(_:)`` checked before the file was mapped.
  private func checkPages(_ dataFile: String, checksummed: (String) -> Bool) throws(LMDBError) {
    // Two commits between the transaction's start and the read of its meta page rewrite
    // that page: then again, with a newer snapshot.
    for _ in 0..<16 {
      var txn: OpaquePointer?
      try check(mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin(page check)")
      guard let txn else { throw LMDBError(code: 12, operation: "mdb_txn_begin(page check)") }
      defer { mdb_txn_abort(txn) }
      let snapshot = UInt64(mdb_txn_id(txn))
      do {
        try Self.reportingDamage(dataFile) {
          try PageCheck.check(dataFile: dataFile, checksummed: checksummed, snapshot: snapshot)
        }
        return
      } catch let e where e.code == Self.snapshotMoved {
        continue
      }
    }
    throw LMDBError(
      code: MDB_BAD_TXN, operation: "page check: writers rewrote both meta pages during each of 16 attempts")
  }

  deinit { mdb_env_close(handle) }

  /// Checks an existing data file before LMDB maps it.
  ///
  /// Its meta pages and length (a file shorter than its pages in use faults the reads of the
  /// missing ones); the pages themselves are walked once it is open (``checkPages(_:checksummed:)``).
  /// A missing or empty file is a new environment.
  ///
  /// - Returns: whether there was a file to check.
  private static func checkDataFile(_ file: String) throws(LMDBError) -> Bool {
    let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? nil
    // Unreadable is LMDB's to report (permission denied), not damage.
    guard let size, size > 0, FileManager.default.isReadableFile(atPath: file) else { return false }
    try reportingDamage(file) { try PageCheck.check(dataFile: file, full: false) }
    return true
  }

  /// The code a check reports its snapshot's meta page rewritten with (`EAGAIN`): it is
  /// tried again, never shown.
  private static let snapshotMoved: Int32 = 11

  /// Runs a check of `file`, its findings as ``LMDBError``s.
  private static func reportingDamage(_ file: String, _ body: () throws -> Void) throws(LMDBError) {
    do {
      try body()
    } catch let damage as FileDamage {
      throw LMDBError(damage: damage)
    } catch is NotAnLMDBFile {
      throw LMDBError(code: MDB_INVALID, operation: "mdb_env_open(\(file))")
    } catch is SnapshotOverwritten {
      throw LMDBError(code: snapshotMoved, operation: "page check")
    } catch {
      throw LMDBError(damage: FileDamage(file: file, detail: "\(error)"))
    }
  }

  // MARK: - Databases

  /// Opens a named database (the unnamed main database when `name` is nil), creating it
  /// in a write transaction when `create` is true.
  ///
  /// - Returns: the handle, or `nil` when the database does not exist and `create` is false.
  public func openDatabase(_ name: String?, flags: DatabaseFlags = [], create: Bool = true) throws(LMDBError)
    -> Database?
  {
    if create && !self.flags.contains(.readOnly) {
      let txn = try beginWrite()
      let db = try txn.openDatabase(name, flags: flags, create: true)
      try txn.commit()
      return db
    }
    let txn = try beginRead()
    let db = try txn.openDatabase(name, flags: flags, create: false)
    try txn.commitHandles()
    return db
  }

  // MARK: - Transactions

  /// Runs `body` in a read-only snapshot of the environment.
  public func read<R>(_ body: (borrowing ReadTransaction) throws -> R) throws -> R {
    let txn = try beginRead()
    return try body(txn)
  }

  /// Begins a read-only transaction; it ends when the value is dropped.
  public func beginRead() throws(LMDBError) -> ReadTransaction {
    try gate.enter()
    var txn: OpaquePointer?
    var rc = mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn)
    if rc == MDB_MAP_RESIZED {
      gate.leave()
      try adoptNewMapSize()
      try gate.enter()
      rc = mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn)
    }
    guard rc == 0, let txn else {
      gate.leave()
      throw LMDBError(code: rc == 0 ? 22 : rc, operation: "mdb_txn_begin(read)")
    }
    return ReadTransaction(handle: txn, lease: TransactionLease(gate: gate, environment: self))
  }

  /// Runs `body` in a write transaction, committed when `body` returns and aborted when it
  /// throws.
  ///
  /// When the map fills, the transaction is aborted, the map doubled and `body`
  /// run again: `body` must act only through the transaction.
  public func write<R>(_ body: (borrowing WriteTransaction) throws -> R) throws -> R {
    var full = false
    while true {
      // After MDB_MAP_FULL the committed data may still look small (one transaction can
      // outgrow the whole map), so double outright rather than trust the three-quarters rule.
      if full { try grow() } else { try growIfNearlyFull() }
      let txn = try beginWrite()
      do {
        let result = try body(txn)
        try txn.commit()
        return result
      } catch let error as LMDBError where error == .mapFull {
        full = true  // `txn` was consumed or is aborted on drop; the loop grows the map.
      }
    }
  }

  /// Runs `body` in a write transaction whose errors are only LMDB's.
  public func write<R>(_ body: (borrowing WriteTransaction) throws(LMDBError) -> R) throws(LMDBError) -> R {
    do {
      return try write { (txn: borrowing WriteTransaction) throws -> R in try body(txn) }
    } catch let e as LMDBError {
      throw e
    } catch {
      throw LMDBError(code: 22, operation: "write: \(error)")
    }
  }

  /// Begins a write transaction; dropping it without ``WriteTransaction/commit()`` aborts.
  ///
  /// It must be used and ended on the thread that began it. With a
  /// ``EnvironmentOptions/fileReserve``, it first writes the next stretch of zeros past the
  /// pages in use when less than half the reserve is left (see `FileReserve`).
  public func beginWrite() throws(LMDBError) -> WriteTransaction {
    try gate.enter()
    var txn: OpaquePointer?
    var rc = mdb_txn_begin(handle, nil, 0, &txn)
    if rc == MDB_MAP_RESIZED {
      gate.leave()
      try adoptNewMapSize()
      try gate.enter()
      rc = mdb_txn_begin(handle, nil, 0, &txn)
    }
    guard rc == 0, let txn else {
      gate.leave()
      throw LMDBError(code: rc == 0 ? 22 : rc, operation: "mdb_txn_begin(write)")
    }
    reserve?.keep(handle)
    return WriteTransaction(handle: txn, lease: TransactionLease(gate: gate, environment: self))
  }

  // MARK: - Map size

  /// Information about the map: its size and how much of it is used.
  public var info: EnvironmentInfo {
    mapLock.lock()
    defer { mapLock.unlock() }
    var i = MDB_envinfo()
    _ = mdb_env_info(handle, &i)
    var s = MDB_stat()
    _ = mdb_env_stat(handle, &s)
    return EnvironmentInfo(
      mapSize: i.me_mapsize, lastPage: Int(i.me_last_pgno), pageSize: Int(s.ms_psize),
      maxReaders: Int(i.me_maxreaders), readersUsed: Int(i.me_numreaders), lastTransaction: UInt64(i.me_last_txnid))
  }

  /// Grows the map to at least `bytes`.
  ///
  /// Waits until no transaction of this process is open.
  public func setMapSize(_ bytes: Int) throws(LMDBError) {
    try gate.exclusive { () throws(LMDBError) in
      mapLock.lock()
      defer { mapLock.unlock() }
      // Never shrink: a writer that measured the map before another one grew it would
      // otherwise undo that growth.
      var i = MDB_envinfo()
      try check(mdb_env_info(handle, &i), "mdb_env_info")
      guard bytes > i.me_mapsize else { return }
      try check(mdb_env_set_mapsize(handle, bytes), "mdb_env_set_mapsize")
    }
  }

  /// Doubles the map when it is more than three quarters used, so that a commit seldom
  /// meets `MDB_MAP_FULL` at all.
  ///
  /// Call with no transaction of this thread open.
  public func growIfNearlyFull() throws(LMDBError) {
    let i = info
    if i.usedSize * 4 > i.mapSize * 3 { try setMapSize(i.mapSize * 2) }
  }

  /// Doubles the map (after `MDB_MAP_FULL`).
  ///
  /// Call with no transaction of this thread open.
  public func grow() throws(LMDBError) {
    try setMapSize(info.mapSize * 2)
  }

  /// Another process grew the map: adopt its size.
  func adoptNewMapSize() throws(LMDBError) {
    try gate.exclusive { () throws(LMDBError) in
      mapLock.lock()
      defer { mapLock.unlock() }
      try check(mdb_env_set_mapsize(handle, 0), "mdb_env_set_mapsize(0)")
    }
  }

  // MARK: - Maintenance

  /// Flushes data to disk; needed only with ``EnvironmentFlags/noSync`` or
  /// ``EnvironmentFlags/noMetaSync``.
  public func sync(force: Bool = true) throws(LMDBError) {
    try check(mdb_env_sync(handle, force ? 1 : 0), "mdb_env_sync")
  }

  /// Releases reader slots held by processes that no longer exist.
  /// - Returns: how many slots were cleared.
  @discardableResult
  public func clearStaleReaders() throws(LMDBError) -> Int {
    var dead: Int32 = 0
    try check(mdb_reader_check(handle, &dead), "mdb_reader_check")
    return Int(dead)
  }

  /// The LMDB library's version text (`LMDB 0.9.31: (July 10, 2023)`).
  public static var libraryVersion: String { String(cString: mdb_version(nil, nil, nil)) }

  /// The largest key LMDB accepts in this environment (511 bytes by default).
  public var maxKeySize: Int { Int(mdb_env_get_maxkeysize(handle)) }

  /// Writes a consistent copy of the environment into `directory` (which must exist and be
  /// empty), its data file given `mode` (LMDB creates it as the process's umask allows).
  public func copy(to directory: String, compact: Bool = false, mode: Int32 = 0o600) throws(LMDBError) {
    // The copy reads the map in a transaction of its own: count it, so that no resize
    // remaps the file under it.
    try gate.enter()
    defer { gate.leave() }
    try check(mdb_env_copy2(handle, directory, compact ? UInt32(MDB_CP_COMPACT) : 0), "mdb_env_copy2")
    let file = directory + "/data.mdb"
    guard chmod(file, mode_t(mode)) == 0 else { throw LMDBError(code: errno, operation: "chmod(\(file))") }
  }
}

/// The environment's map and reader table.
public struct EnvironmentInfo: Sendable, Hashable {
  public let mapSize: Int
  public let lastPage: Int
  public let pageSize: Int
  public let maxReaders: Int
  public let readersUsed: Int
  /// The last committed transaction's id (as the meta page records it).
  public let lastTransaction: UInt64
  /// The bytes of the pages in use (the last page and all before it).
  public var usedSize: Int { (lastPage + 1) * pageSize }
}

/// Keeps the map size from changing while any transaction of this process is open.
///
/// LMDB requires that `mdb_env_set_mapsize` is called with no transaction active in the
/// process; read transactions may move between threads (MDB_NOTLS), so a
/// thread-owned lock cannot be held for their lifetime. A count under a condition is.
final class TransactionGate: @unchecked Sendable {
  // SAFETY (@unchecked Sendable): all state is read and written under `condition`.
  private let condition = NSCondition()
  private var active = 0
  private var resizing = false

  func enter() throws(LMDBError) {
    condition.lock()
    while resizing { condition.wait() }
    active += 1
    condition.unlock()
  }

  func leave() {
    condition.lock()
    active -= 1
    if active == 0 { condition.broadcast() }
    condition.unlock()
  }

  func exclusive(_ body: () throws(LMDBError) -> Void) throws(LMDBError) {
    condition.lock()
    while resizing { condition.wait() }
    resizing = true
    while active > 0 { condition.wait() }
    condition.unlock()
    defer {
      condition.lock()
      resizing = false
      condition.broadcast()
      condition.unlock()
    }
    try body()
  }
}
