internal import CLMDB

/// An open transaction's C handle, opaque outside this module.
public struct TransactionHandle {
  let pointer: OpaquePointer
}

/// The operations every transaction offers: reads and cursors.
public protocol TransactionReading: ~Copyable {
  /// The C transaction, for this module's shared implementations.
  var transactionHandle: TransactionHandle { get }
}

/// The operations of a write transaction, shared by ``WriteTransaction`` and ``WriteHandle``.
public protocol TransactionWriting: TransactionReading, ~Copyable {}

/// A copyable reference to an open write transaction, for code that keeps the transaction
/// in an object for the duration of a closure-scoped write (as the store's own transaction
/// type does).
///
/// It is valid only until the ``WriteTransaction`` it came from ends: the owner
/// of that transaction must not let it escape.
public struct WriteHandle: TransactionWriting {
  public let transactionHandle: TransactionHandle
}

/// A copyable reference to an open read transaction, valid until the
/// ``ReadTransaction`` it came from ends (the same contract as ``WriteHandle``).
public struct ReadHandle: TransactionReading {
  public let transactionHandle: TransactionHandle
}

/// A read-only snapshot.
///
/// It ends (and frees its reader slot) when dropped; keep it short,
/// since an open reader stops LMDB from reusing pages freed after it began.
public struct ReadTransaction: ~Copyable, TransactionReading {
  private var owned: OpaquePointer?
  private let pointer: OpaquePointer
  private let lease: TransactionLease

  init(handle: OpaquePointer, lease: TransactionLease) {
    self.owned = handle
    self.pointer = handle
    self.lease = lease
  }

  public var transactionHandle: TransactionHandle { TransactionHandle(pointer: pointer) }

  /// A copyable reference to this transaction, valid until it ends.
  public var handle: ReadHandle { ReadHandle(transactionHandle: transactionHandle) }

  /// Ends the snapshot keeping the database handles opened in it (LMDB discards handles
  /// opened in a read transaction that is aborted rather than committed).
  consuming func commitHandles() throws(LMDBError) {
    guard let h = owned else { return }
    owned = nil
    try check(mdb_txn_commit(h), "mdb_txn_commit(read)")
  }

  deinit {
    if let owned { mdb_txn_abort(owned) }
    lease.end()
  }
}

/// A write transaction.
///
/// ``commit()`` makes it durable; dropping it aborts.
/// It belongs to the thread that began it: never `await` while one is open.
public struct WriteTransaction: ~Copyable, TransactionWriting {
  private var owned: OpaquePointer?
  private let lease: TransactionLease
  private let pointer: OpaquePointer

  init(handle: OpaquePointer, lease: TransactionLease) {
    self.owned = handle
    self.pointer = handle
    self.lease = lease
  }

  public var transactionHandle: TransactionHandle { TransactionHandle(pointer: pointer) }

  /// A copyable reference to this transaction, valid until it ends.
  public var handle: WriteHandle { WriteHandle(transactionHandle: transactionHandle) }

  /// Commits every change made in this transaction atomically.
  ///
  /// - Throws: ``LMDBError``; the transaction is gone either way.
  public consuming func commit() throws(LMDBError) {
    guard let h = owned else { return }
    owned = nil  // mdb_txn_commit frees the handle even when it fails.
    try check(mdb_txn_commit(h), "mdb_txn_commit")
  }

  /// Discards every change made in this transaction.
  public consuming func abort() {}

  deinit {
    if let owned { mdb_txn_abort(owned) }
    lease.end()
  }
}

extension ReadTransaction {
  /// Opens an existing named database; `nil` when it does not exist.
  public func openDatabase(_ name: String?, flags: DatabaseFlags = [], create: Bool = false) throws(LMDBError)
    -> Database?
  {
    var dbi: MDB_dbi = 0
    let h = transactionHandle.pointer
    let rc = name.map { mdb_dbi_open(h, $0, flags.lmdb, &dbi) } ?? mdb_dbi_open(h, nil, flags.lmdb, &dbi)
    if rc == MDB_NOTFOUND { return nil }
    try check(rc, "mdb_dbi_open(\(name ?? "main"))")
    return Database(dbi: dbi, flags: flags, name: name)
  }
}

// MARK: - Writes

extension TransactionWriting where Self: ~Copyable {
  /// Runs `body` in a nested transaction: its changes become part of this transaction when
  /// `body` returns, and are discarded alone when it throws.
  ///
  /// - Throws: what `body` throws (after rolling back the nested changes), or ``LMDBError``.
  public func nested<R>(_ body: (borrowing WriteTransaction) throws -> R) throws -> R {
    var child: OpaquePointer?
    try check(
      mdb_txn_begin(mdb_txn_env(transactionHandle.pointer), transactionHandle.pointer, 0, &child),
      "mdb_txn_begin(nested)")
    guard let child else { throw LMDBError(code: 22, operation: "mdb_txn_begin(nested)") }
    let txn = WriteTransaction(handle: child, lease: TransactionLease(gate: nil, environment: nil))
    let result = try body(txn)
    try txn.commit()
    return result
  }

  // MARK: - Writes

  /// Stores `value` under `key`.
  ///
  /// - Returns: `false` when ``PutFlags/noOverwrite`` was given and the key exists.
  @inlinable @discardableResult
  public func put(_ db: Database, key: some LMDBBytes, value: some LMDBBytes, flags: PutFlags = [])
    throws(LMDBError) -> Bool
  {
    try key.withLMDBBytes { k in value.withLMDBBytes { v in putBytes(db, k, v, flags, appendFirst: false) } }.get()
  }

  /// Stores `value` under `key` as ``put(_:key:value:flags:)`` does, trying an append first.
  ///
  /// When `key` sorts after every key of `db`, LMDB adds it at the end without searching
  /// the tree, and a page that fills is left full rather than split in half. Otherwise
  /// LMDB refuses the append (`MDB_KEYEXIST`) before changing anything, and the ordinary
  /// put follows: callers use it for keys that are usually, not always, the last.
  ///
  /// - Returns: `false` when ``PutFlags/noOverwrite`` was given and the key exists.
  @inlinable @discardableResult
  public func appendOrPut(_ db: Database, key: some LMDBBytes, value: some LMDBBytes, flags: PutFlags = [])
    throws(LMDBError) -> Bool
  {
    try key.withLMDBBytes { k in value.withLMDBBytes { v in putBytes(db, k, v, flags, appendFirst: true) } }.get()
  }

  // The generic entry points are inlinable, so that a caller's key and value types are
  // specialized where they are used; the C calls stay in these non-generic cores.

  @usableFromInline
  func putBytes(
    _ db: Database, _ k: UnsafeRawBufferPointer, _ v: UnsafeRawBufferPointer, _ flags: PutFlags, appendFirst: Bool
  ) -> Result<Bool, LMDBError> {
    guard db.checksummed else { return putRaw(db, k, v, flags, appendFirst: appendFirst) }
    return EntryChecksum.withStored(k, v) { putRaw(db, k, $0, flags, appendFirst: appendFirst) }
  }

  private func putRaw(
    _ db: Database, _ k: UnsafeRawBufferPointer, _ v: UnsafeRawBufferPointer, _ flags: PutFlags, appendFirst: Bool
  ) -> Result<Bool, LMDBError> {
    // SAFETY: both buffers are valid for this call; LMDB copies them into its pages.
    var kv = MDB_val(k)
    var vv = MDB_val(v)
    var rc: Int32 = MDB_KEYEXIST
    if appendFirst {
      rc = mdb_put(transactionHandle.pointer, db.dbi, &kv, &vv, flags.rawValue | UInt32(MDB_APPEND))
      // A refused append changed nothing: the ordinary put follows, with fresh values.
      kv = MDB_val(k)
      vv = MDB_val(v)
    }
    if rc == MDB_KEYEXIST { rc = mdb_put(transactionHandle.pointer, db.dbi, &kv, &vv, flags.rawValue) }
    if rc == MDB_KEYEXIST && !flags.isDisjoint(with: [.noOverwrite, .noDuplicateData]) { return .success(false) }
    do { try check(rc, "mdb_put") } catch { return .failure(error) }
    return .success(true)
  }

  /// Stores a value of `count` bytes under `key`, written in place by `fill` (`MDB_RESERVE`):
  /// the value is encoded straight into the page, with no intermediate buffer.
  public func put(
    _ db: Database, key: some LMDBBytes, reserving count: Int, flags: PutFlags = [],
    fill: (UnsafeMutableRawBufferPointer) -> Void
  ) throws(LMDBError) {
    let stored = count + (db.checksummed ? EntryChecksum.size : 0)
    var vv = MDB_val(mv_size: stored, mv_data: nil)
    let rc = key.withLMDBBytes { k in
      // SAFETY: the key buffer is valid for this call; LMDB copies it.
      var kv = MDB_val(k)
      return mdb_put(transactionHandle.pointer, db.dbi, &kv, &vv, flags.rawValue | UInt32(MDB_RESERVE))
    }
    try check(rc, "mdb_put(reserve)")
    // SAFETY: LMDB returned a writable region of exactly `stored` bytes inside a dirty page
    // of this transaction; it stays valid until the next write in this transaction.
    let region = UnsafeMutableRawBufferPointer(start: vv.mv_data, count: stored)
    fill(UnsafeMutableRawBufferPointer(rebasing: region[..<count]))
    if db.checksummed {
      let crc = key.withLMDBBytes { k in EntryChecksum.of(k, UnsafeRawBufferPointer(rebasing: region[..<count])) }
      EntryChecksum.write(crc, into: region, at: count)
    }
  }

  /// Removes `key` (and all its values in a duplicate-sorted database).
  /// - Returns: whether the key was there.
  @inlinable @discardableResult
  public func delete(_ db: Database, key: some LMDBBytes) throws(LMDBError) -> Bool {
    try key.withLMDBBytes { k in deleteBytes(db, k) }.get()
  }

  @usableFromInline
  func deleteBytes(_ db: Database, _ k: UnsafeRawBufferPointer) -> Result<Bool, LMDBError> {
    // SAFETY: the key buffer is valid for this call.
    var kv = MDB_val(k)
    let rc = mdb_del(transactionHandle.pointer, db.dbi, &kv, nil)
    if rc == MDB_NOTFOUND { return .success(false) }
    do { try check(rc, "mdb_del") } catch { return .failure(error) }
    return .success(true)
  }

  /// Removes every entry of `db`, keeping the database itself.
  public func empty(_ db: Database) throws(LMDBError) {
    try check(mdb_drop(transactionHandle.pointer, db.dbi, 0), "mdb_drop")
  }

  /// Deletes a named database and closes its handle: the handle must not be used again.
  public func drop(_ db: Database) throws(LMDBError) {
    try check(mdb_drop(transactionHandle.pointer, db.dbi, 1), "mdb_drop(delete)")
  }

  /// Opens or creates a named database inside this transaction.
  public func openDatabase(_ name: String?, flags: DatabaseFlags = [], create: Bool) throws(LMDBError)
    -> Database?
  {
    var dbi: MDB_dbi = 0
    let f = flags.lmdb | (create ? UInt32(MDB_CREATE) : 0)
    let rc =
      name.map { mdb_dbi_open(transactionHandle.pointer, $0, f, &dbi) }
      ?? mdb_dbi_open(transactionHandle.pointer, nil, f, &dbi)
    if rc == MDB_NOTFOUND { return nil }
    try check(rc, "mdb_dbi_open(\(name ?? "main"))")
    return Database(dbi: dbi, flags: flags, name: name)
  }
}

// MARK: - Reads, shared by both kinds of transaction

extension TransactionReading where Self: ~Copyable {
  /// LMDB's transaction ID (`mdb_txn_id`): for a write transaction, one more than the ID of
  /// the last write transaction committed to the environment by any process.
  ///
  /// A write transaction whose ID is one more than that of a commit one remembers sees
  /// exactly the state that commit left: no other write was committed in between. An
  /// aborted transaction, and a commit that changed nothing, use up no ID.
  public var transactionID: UInt64 { UInt64(mdb_txn_id(transactionHandle.pointer)) }

  /// Calls `body` with the value stored under `key`, without copying it out of the map.
  ///
  /// The buffer is valid only inside `body`.
  /// - Returns: `nil` when the key is absent, else what `body` returns.
  @inlinable
  public func withValue<R>(_ db: Database, key: some LMDBBytes, _ body: (UnsafeRawBufferPointer) throws -> R)
    throws -> R?
  {
    guard let v = try key.withLMDBBytes({ k in valueBytes(db, k) }).get() else { return nil }
    return try body(v)
  }

  /// The value under a key, pointing into the map (`nil` when absent).
  @usableFromInline
  func valueBytes(_ db: Database, _ k: UnsafeRawBufferPointer) -> Result<UnsafeRawBufferPointer?, LMDBError> {
    // SAFETY: the key buffer is valid for this call.
    var kv = MDB_val(k)
    var vv = MDB_val()
    let rc = mdb_get(transactionHandle.pointer, db.dbi, &kv, &vv)
    if rc == MDB_NOTFOUND { return .success(nil) }
    do { try check(rc, "mdb_get") } catch { return .failure(error) }
    // SAFETY: the value points into the map and stays valid until this transaction ends or
    // writes again; callers (`withValue`'s body) may not keep the pointer.
    let stored = UnsafeRawBufferPointer(start: vv.mv_data, count: vv.mv_size)
    guard db.checksummed else { return .success(stored) }
    guard let value = EntryChecksum.verified(k, stored) else {
      return .failure(EntryChecksum.mismatch(transactionHandle.pointer, db, k))
    }
    return .success(value)
  }

  /// The value stored under `key`, copied; `nil` when absent.
  @inlinable
  public func get(_ db: Database, key: some LMDBBytes) throws(LMDBError) -> [UInt8]? {
    do {
      return try withValue(db, key: key) { [UInt8]($0) }
    } catch let e as LMDBError {
      throw e
    } catch {
      throw LMDBError(code: 22, operation: "mdb_get")
    }
  }

  /// Whether `key` is present.
  @inlinable
  public func contains(_ db: Database, key: some LMDBBytes) throws(LMDBError) -> Bool {
    try get(db, key: key) != nil
  }

  /// B-tree counts of `db`.
  public func statistics(_ db: Database) throws(LMDBError) -> DatabaseStatistics {
    var s = MDB_stat()
    try check(mdb_stat(transactionHandle.pointer, db.dbi, &s), "mdb_stat")
    return DatabaseStatistics(
      entries: s.ms_entries, depth: Int(s.ms_depth), branchPages: s.ms_branch_pages,
      leafPages: s.ms_leaf_pages, overflowPages: s.ms_overflow_pages, pageSize: Int(s.ms_psize))
  }

  /// The pages on LMDB's free list as this transaction sees it: pages freed by earlier
  /// transactions, which later writes reuse once no reader still needs them.
  public func freePages() throws(LMDBError) -> Int {
    // The free list is database 0; each value is a list of page numbers (8 bytes each)
    // led by their count.
    let cursor = try self.cursor(Database(dbi: 0))
    var pages = 0
    var more = try cursor.first()
    while more {
      let (_, value) = try cursor.current()
      pages += max(0, value.count / 8 - 1)
      more = try cursor.next()
    }
    return pages
  }

  /// Opens a cursor on `db`; it closes when dropped, and must not outlive this transaction.
  public func cursor(_ db: Database) throws(LMDBError) -> Cursor {
    var c: OpaquePointer?
    try check(mdb_cursor_open(transactionHandle.pointer, db.dbi, &c), "mdb_cursor_open")
    guard let c else { throw LMDBError(code: 22, operation: "mdb_cursor_open") }
    return Cursor(handle: c, database: db)
  }

  /// Visits entries in key order, starting at the first key `>= start` (or the first key),
  /// until `body` returns `false`.
  ///
  /// - Parameter body: gets the key and the value, valid only during the call.
  @inlinable
  public func forEach(
    _ db: Database, from start: (some LMDBBytes)? = [UInt8]?.none,
    _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
  ) throws {
    let cursor = try self.cursor(db)
    var more = try start.map { try cursor.seek($0) } ?? cursor.first()
    while more {
      guard try cursor.withCurrent(body) else { return }
      more = try cursor.next()
    }
  }
}

/// What a transaction holds of its environment: the gate it entered (left when the
/// transaction ends) and the environment itself, kept open while the transaction lives —
/// an optimized build may release a caller's last reference to the environment before a
/// transaction begun on it has ended.
final class TransactionLease {
  private let gate: TransactionGate?
  private let environment: Environment?

  init(gate: TransactionGate?, environment: Environment?) {
    self.gate = gate
    self.environment = environment
  }

  func end() { gate?.leave() }
}
