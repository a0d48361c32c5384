internal import CLMDB

/// An open transaction's C handle, lent for the length of one call.
///
/// It is `~Copyable` and has no public initializer: outside this module one is only ever
/// borrowed, as the parameter of ``TransactionReading/withAccess(_:)``'s closure, so it
/// cannot be kept, copied or returned. No public value of this module that can be copied
/// holds a transaction's or a cursor's C handle.
public struct TransactionAccess: ~Copyable {
  @usableFromInline let pointer: OpaquePointer

  @usableFromInline init(_ pointer: OpaquePointer) { self.pointer = pointer }
}

/// The operations every transaction offers: reads and cursors.
///
/// Code outside this module may conform a type that owns a transaction (a class that keeps
/// a ``ReadTransaction`` as a stored property, say) by lending that transaction's access.
public protocol TransactionReading: ~Copyable {
  /// Calls `body` with the C handle, borrowed for the call: the one way to it.
  func withAccess<R: ~Copyable>(_ body: (borrowing TransactionAccess) throws(LMDBError) -> R) throws(LMDBError)
    -> R
}

/// The operations of a write transaction.
public protocol TransactionWriting: TransactionReading, ~Copyable {}

/// A read-only snapshot.
///
/// It ends (and frees its reader slot) when dropped; keep it short,
/// since an open reader stops LMDB from reusing pages freed after it began.
public struct ReadTransaction: ~Copyable, TransactionReading {
  private var owned: OpaquePointer?
  @usableFromInline let pointer: OpaquePointer
  private let lease: TransactionLease

  init(handle: OpaquePointer, lease: TransactionLease) {
    self.owned = handle
    self.pointer = handle
    self.lease = lease
  }

  @inlinable
  public func withAccess<R: ~Copyable>(_ body: (borrowing TransactionAccess) throws(LMDBError) -> R)
    throws(LMDBError) -> R
  {
    try body(TransactionAccess(pointer))
  }

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
  /// The innermost open transaction: `owned`, or the nested one begun last.
  @usableFromInline private(set) var pointer: OpaquePointer
  /// The transactions that nested ones were begun in, innermost last.
  private var parents: [OpaquePointer] = []

  init(handle: OpaquePointer, lease: TransactionLease) {
    self.owned = handle
    self.pointer = handle
    self.lease = lease
  }

  @inlinable
  public func withAccess<R: ~Copyable>(_ body: (borrowing TransactionAccess) throws(LMDBError) -> R)
    throws(LMDBError) -> R
  {
    try body(TransactionAccess(pointer))
  }

  /// Commits every change made in this transaction atomically (with those of nested
  /// transactions still open).
  ///
  /// - Throws: ``LMDBError``; the transaction is gone either way.
  public consuming func commit() throws(LMDBError) {
    guard let h = owned else { return }
    owned = nil  // mdb_txn_commit frees the handle (and any open child) even when it fails.
    // The environment outlives its transactions: read after the commit, for the message.
    let env = mdb_txn_env(h)
    let rc = mdb_txn_commit(h)
    guard rc != MDB_SUCCESS else { return }
    throw LMDBError(code: rc, operation: "mdb_txn_commit of \(Self.dataFile(env))")
  }

  /// The data file of `env`, to name in an error: its path, and `data.mdb` in it unless
  /// the environment is a file of its own.
  static func dataFile(_ env: OpaquePointer?) -> String {
    var path: UnsafePointer<CChar>?
    var flags: UInt32 = 0
    guard let env, mdb_env_get_path(env, &path) == 0, let path else { return "the environment" }
    _ = mdb_env_get_flags(env, &flags)
    let name = String(cString: path)
    return flags & UInt32(MDB_NOSUBDIR) != 0 ? name : name + "/data.mdb"
  }

  /// Discards every change made in this transaction.
  public consuming func abort() {}

  /// Begins a nested transaction in place, ended by ``endNested(commit:)``.
  ///
  /// The operations that follow act in it, for an owner that cannot scope it in a closure
  /// (``TransactionWriting/nested(_:)`` is the closure form). Ending or dropping this
  /// transaction ends the nested ones with it, since LMDB ends a child with its parent.
  public mutating func beginNested() throws(LMDBError) {
    let child = try TransactionAccess(pointer).beginChildHandle()
    parents.append(pointer)
    pointer = child
  }

  /// Ends the nested transaction begun last: its changes become part of the one around it
  /// when `commit`, and are discarded otherwise.
  ///
  /// - Throws: ``LMDBError``; the nested transaction is gone either way.
  public mutating func endNested(commit: Bool) throws(LMDBError) {
    guard let parent = parents.popLast() else {
      throw LMDBError(code: 22, operation: "endNested: no nested transaction")
    }
    let child = pointer
    pointer = parent
    if commit { try check(mdb_txn_commit(child), "mdb_txn_commit(nested)") } else { mdb_txn_abort(child) }
  }

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
    try withAccess { a throws(LMDBError) in try a.openDatabase(name, flags: flags, create: false) }
  }
}

// MARK: - Writes

extension TransactionWriting where Self: ~Copyable {
  /// Runs `body` in a nested transaction: its changes become part of this transaction when
  /// `body` returns, and are discarded alone when it throws.
  ///
  /// - Throws: what `body` throws (after rolling back the nested changes), or ``LMDBError``.
  public func nested<R>(_ body: (borrowing WriteTransaction) throws -> R) throws -> R {
    let txn = try withAccess { a throws(LMDBError) in try a.beginChild() }
    let result = try body(txn)
    try txn.commit()
    return result
  }

  /// Stores `value` under `key`.
  ///
  /// - Returns: `false` when ``PutFlags/noOverwrite`` was given and the key exists.
  @inlinable @discardableResult
  public func put(_ db: Database, key: some LMDBBytes, value: some LMDBBytes, flags: PutFlags = [])
    throws(LMDBError) -> Bool
  {
    try key.withLMDBBytes { k in
      value.withLMDBBytes { v in lend { $0.putBytes(db, k, v, flags, appendFirst: false, owned: value.isOwnMemory) } }
    }.get()
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
    try key.withLMDBBytes { k in
      value.withLMDBBytes { v in lend { $0.putBytes(db, k, v, flags, appendFirst: true, owned: value.isOwnMemory) } }
    }.get()
  }

  /// Stores a value of `count` bytes under `key`, written in place by `fill` (`MDB_RESERVE`):
  /// the value is encoded straight into the page, with no intermediate buffer.
  public func put(
    _ db: Database, key: some LMDBBytes, reserving count: Int, flags: PutFlags = [],
    fill: (UnsafeMutableRawBufferPointer) -> Void
  ) throws(LMDBError) {
    let stored = count + (db.checksummed ? EntryChecksum.size : 0)
    let start = try withAccess { a throws(LMDBError) in
      try key.withLMDBBytes { k in a.reserve(db, k, stored, flags) }.get()
    }
    // SAFETY: LMDB returned a writable region of exactly `stored` bytes inside a dirty page
    // of this transaction; it stays valid until the next write in this transaction.
    let region = UnsafeMutableRawBufferPointer(start: start, count: stored)
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
    try key.withLMDBBytes { k in lend { $0.deleteBytes(db, k) } }.get()
  }

  /// Removes every entry of `db`, keeping the database itself.
  public func empty(_ db: Database) throws(LMDBError) {
    try withAccess { a throws(LMDBError) in try check(mdb_drop(a.pointer, db.dbi, 0), "mdb_drop") }
  }

  /// Deletes a named database and closes its handle: the handle must not be used again.
  public func drop(_ db: Database) throws(LMDBError) {
    try withAccess { a throws(LMDBError) in try check(mdb_drop(a.pointer, db.dbi, 1), "mdb_drop(delete)") }
  }

  /// Opens or creates a named database inside this transaction.
  public func openDatabase(_ name: String?, flags: DatabaseFlags = [], create: Bool) throws(LMDBError)
    -> Database?
  {
    try withAccess { a throws(LMDBError) in try a.openDatabase(name, flags: flags, create: create) }
  }
}

// MARK: - Reads, shared by both kinds of transaction

extension TransactionReading where Self: ~Copyable {
  /// `body`'s result with the C handle lent, the refusal of an ended owner as a failure.
  @usableFromInline
  func lend<T>(_ body: (borrowing TransactionAccess) -> Result<T, LMDBError>) -> Result<T, LMDBError> {
    do { return try withAccess(body) } catch { return .failure(error) }
  }

  /// LMDB's transaction ID (`mdb_txn_id`): for a write transaction, one more than the ID of
  /// the last write transaction committed to the environment by any process.
  ///
  /// A write transaction whose ID is one more than that of a commit one remembers sees
  /// exactly the state that commit left: no other write was committed in between. An
  /// aborted transaction, and a commit that changed nothing, use up no ID. 0 when the
  /// owner of the transaction has ended it.
  public var transactionID: UInt64 { (try? withAccess { a in UInt64(mdb_txn_id(a.pointer)) }) ?? 0 }

  /// Calls `body` with the value stored under `key`, without copying it out of the map.
  ///
  /// The buffer is valid only inside `body`.
  /// - Returns: `nil` when the key is absent, else what `body` returns.
  @inlinable
  public func withValue<R>(_ db: Database, key: some LMDBBytes, _ body: (UnsafeRawBufferPointer) throws -> R)
    throws -> R?
  {
    guard let v = try key.withLMDBBytes({ k in lend { $0.valueBytes(db, k) } }).get() else { return nil }
    return try body(v)
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
    try withAccess { a throws(LMDBError) in try check(mdb_stat(a.pointer, db.dbi, &s), "mdb_stat") }
    return DatabaseStatistics(
      entries: s.ms_entries, depth: Int(s.ms_depth), branchPages: s.ms_branch_pages,
      leafPages: s.ms_leaf_pages, overflowPages: s.ms_overflow_pages, pageSize: Int(s.ms_psize))
  }

  /// The pages on LMDB's free list as this transaction sees it: pages freed by earlier
  /// transactions, which later writes reuse once no reader still needs them.
  public func freePages() throws -> Int {
    // The free list is database 0; each value is a list of page numbers (8 bytes each)
    // led by their count.
    try withCursor(Database(dbi: 0)) { cursor in
      var pages = 0
      var more = try cursor.first()
      while more {
        let (_, value) = try cursor.current()
        pages += max(0, value.count / 8 - 1)
        more = try cursor.next()
      }
      return pages
    }
  }

  /// Calls `body` with a cursor on `db`, closed when `body` returns.
  ///
  /// The cursor is borrowed: it cannot be kept past the call, so it cannot outlive this
  /// transaction.
  @inlinable
  public func withCursor<R>(_ db: Database, _ body: (borrowing Cursor) throws -> R) throws -> R {
    let cursor = try withAccess { a throws(LMDBError) in try a.openCursor(db) }
    return try body(cursor)
  }

  /// Visits entries in key order, starting at the first key `>= start` (or the first key),
  /// until `body` returns `false`.
  ///
  /// - Parameters:
  ///   - db: the database to visit.
  ///   - start: the key to start at; `nil` for the first key.
  ///   - body: gets the key and the value, valid only during the call.
  @inlinable
  public func forEach(
    _ db: Database, from start: (some LMDBBytes)? = [UInt8]?.none,
    _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
  ) throws {
    try withCursor(db) { cursor in
      var more = try start.map { try cursor.seek($0) } ?? cursor.first()
      while more {
        guard try cursor.withCurrent(body) else { return }
        more = try cursor.next()
      }
    }
  }
}

// MARK: - The C calls

extension TransactionAccess {
  @usableFromInline
  func putBytes(
    _ db: Database, _ k: UnsafeRawBufferPointer, _ v: UnsafeRawBufferPointer, _ flags: PutFlags, appendFirst: Bool,
    owned: Bool
  ) -> Result<Bool, LMDBError> {
    guard db.checksummed else { return putRaw(db, k, v, flags, appendFirst: appendFirst) }
    // A value that may lie in the map (read in this transaction) may sit on a page this put
    // changes before the value would be copied in: it goes through a buffer of its own.
    guard owned else {
      return EntryChecksum.withStored(k, v) { putRaw(db, k, $0, flags, appendFirst: appendFirst) }
    }
    // The value and its checksum are written straight into the space LMDB reserves for
    // them (`MDB_RESERVE`), rather than assembled in a buffer LMDB then copies.
    let crc = EntryChecksum.of(k, v)
    var kv = MDB_val(k)
    var vv = MDB_val(mv_size: v.count + EntryChecksum.size, mv_data: nil)
    let reserve = UInt32(MDB_RESERVE)
    var rc: Int32 = MDB_KEYEXIST
    if appendFirst {
      rc = mdb_put(pointer, db.dbi, &kv, &vv, flags.rawValue | UInt32(MDB_APPEND) | reserve)
      // A refused append changed nothing: the ordinary put follows, with fresh values (a
      // successful one left `vv` pointing at the reserved space).
      if rc == MDB_KEYEXIST {
        kv = MDB_val(k)
        vv = MDB_val(mv_size: v.count + EntryChecksum.size, mv_data: nil)
      }
    }
    if rc == MDB_KEYEXIST { rc = mdb_put(pointer, db.dbi, &kv, &vv, flags.rawValue | reserve) }
    // A refused put (the key exists under `noOverwrite`) points `vv` at the existing value:
    // nothing is written then.
    if rc == MDB_KEYEXIST && !flags.isDisjoint(with: [.noOverwrite, .noDuplicateData]) { return .success(false) }
    do { try check(rc, "mdb_put") } catch { return .failure(error) }
    guard let region = vv.mv_data else { return .failure(LMDBError(code: MDB_PANIC, operation: "mdb_put(reserve)")) }
    EntryChecksum.fill(region, v, crc)
    return .success(true)
  }

  private func putRaw(
    _ db: Database, _ k: UnsafeRawBufferPointer, _ v: UnsafeRawBufferPointer, _ flags: PutFlags, appendFirst: Bool
  ) -> Result<Bool, LMDBError> {
    // SAFETY: both buffers are valid for this call; LMDB copies them into its pages.
    var kv = MDB_val(k)
    var vv = MDB_val(v)
    var rc: Int32 = MDB_KEYEXIST
    if appendFirst {
      rc = mdb_put(pointer, db.dbi, &kv, &vv, flags.rawValue | UInt32(MDB_APPEND))
      // A refused append changed nothing: the ordinary put follows, with fresh values.
      kv = MDB_val(k)
      vv = MDB_val(v)
    }
    if rc == MDB_KEYEXIST { rc = mdb_put(pointer, db.dbi, &kv, &vv, flags.rawValue) }
    if rc == MDB_KEYEXIST && !flags.isDisjoint(with: [.noOverwrite, .noDuplicateData]) { return .success(false) }
    do { try check(rc, "mdb_put") } catch { return .failure(error) }
    return .success(true)
  }

  /// Reserves `count` bytes under `key` (`MDB_RESERVE`) and returns where they start.
  func reserve(_ db: Database, _ k: UnsafeRawBufferPointer, _ count: Int, _ flags: PutFlags)
    -> Result<UnsafeMutableRawPointer?, LMDBError>
  {
    // SAFETY: the key buffer is valid for this call; LMDB copies it.
    var kv = MDB_val(k)
    var vv = MDB_val(mv_size: count, mv_data: nil)
    do {
      try check(mdb_put(pointer, db.dbi, &kv, &vv, flags.rawValue | UInt32(MDB_RESERVE)), "mdb_put(reserve)")
    } catch { return .failure(error) }
    return .success(vv.mv_data)
  }

  @usableFromInline
  func deleteBytes(_ db: Database, _ k: UnsafeRawBufferPointer) -> Result<Bool, LMDBError> {
    // SAFETY: the key buffer is valid for this call.
    var kv = MDB_val(k)
    let rc = mdb_del(pointer, db.dbi, &kv, nil)
    if rc == MDB_NOTFOUND { return .success(false) }
    do { try check(rc, "mdb_del") } catch { return .failure(error) }
    return .success(true)
  }

  /// The value under a key, pointing into the map (`nil` when absent).
  @usableFromInline
  func valueBytes(_ db: Database, _ k: UnsafeRawBufferPointer) -> Result<UnsafeRawBufferPointer?, LMDBError> {
    // SAFETY: the key buffer is valid for this call.
    var kv = MDB_val(k)
    var vv = MDB_val()
    let rc = mdb_get(pointer, db.dbi, &kv, &vv)
    if rc == MDB_NOTFOUND { return .success(nil) }
    do { try check(rc, "mdb_get") } catch { return .failure(error) }
    // SAFETY: the value points into the map and stays valid until this transaction ends or
    // writes again; callers (`withValue`'s body) may not keep the pointer.
    let stored = UnsafeRawBufferPointer(start: vv.mv_data, count: vv.mv_size)
    guard db.checksummed else { return .success(stored) }
    guard let value = EntryChecksum.verified(k, stored) else {
      return .failure(EntryChecksum.mismatch(pointer, db, k))
    }
    return .success(value)
  }

  func openDatabase(_ name: String?, flags: DatabaseFlags, create: Bool) throws(LMDBError) -> Database? {
    var dbi: MDB_dbi = 0
    let f = flags.lmdb | (create ? UInt32(MDB_CREATE) : 0)
    let rc = name.map { mdb_dbi_open(pointer, $0, f, &dbi) } ?? mdb_dbi_open(pointer, nil, f, &dbi)
    if rc == MDB_NOTFOUND { return nil }
    try check(rc, "mdb_dbi_open(\(name ?? "main"))")
    return Database(dbi: dbi, flags: flags, name: name)
  }

  @usableFromInline
  func openCursor(_ db: Database) throws(LMDBError) -> Cursor {
    var c: OpaquePointer?
    try check(mdb_cursor_open(pointer, db.dbi, &c), "mdb_cursor_open")
    guard let c else { throw LMDBError(code: 22, operation: "mdb_cursor_open") }
    return Cursor(handle: c, database: db)
  }

  /// A nested transaction of this one, for ``TransactionWriting/nested(_:)``.
  func beginChild() throws(LMDBError) -> WriteTransaction {
    WriteTransaction(handle: try beginChildHandle(), lease: TransactionLease(gate: nil, environment: nil))
  }

  func beginChildHandle() throws(LMDBError) -> OpaquePointer {
    var child: OpaquePointer?
    try check(mdb_txn_begin(mdb_txn_env(pointer), pointer, 0, &child), "mdb_txn_begin(nested)")
    guard let child else { throw LMDBError(code: 22, operation: "mdb_txn_begin(nested)") }
    return child
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
