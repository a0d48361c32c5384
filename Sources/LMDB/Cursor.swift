internal import CLMDB

/// A position in a database, moved by the methods below.
///
/// Only lent, by ``TransactionReading/withCursor(_:_:)``, and closed when the call ends: a
/// borrowed `~Copyable` value cannot be kept, so a cursor cannot outlive its transaction.
///
/// Every move returns whether the cursor now stands on an entry.
public struct Cursor: ~Copyable {
  private let handle: OpaquePointer

  /// The database it walks (whose values may carry checksums).
  private let database: Database

  init(handle: OpaquePointer, database: Database) {
    self.handle = handle
    self.database = database
  }

  deinit { mdb_cursor_close(handle) }

  private func move(_ op: MDB_cursor_op) throws(LMDBError) -> Bool {
    var k = MDB_val()
    var v = MDB_val()
    let rc = mdb_cursor_get(handle, &k, &v, op)
    if rc == MDB_NOTFOUND { return false }
    try check(rc, "mdb_cursor_get")
    return true
  }

  public func first() throws(LMDBError) -> Bool { try move(MDB_FIRST) }
  public func last() throws(LMDBError) -> Bool { try move(MDB_LAST) }
  public func next() throws(LMDBError) -> Bool { try move(MDB_NEXT) }
  public func previous() throws(LMDBError) -> Bool { try move(MDB_PREV) }

  /// Moves to the first entry whose key is `>= key` (the first entry for an empty key,
  /// which LMDB itself refuses).
  @inlinable
  public func seek(_ key: some LMDBBytes) throws(LMDBError) -> Bool {
    try key.withLMDBBytes { k in position(k, exact: false) }.get()
  }

  /// Moves to the entry whose key is exactly `key`.
  @inlinable
  public func find(_ key: some LMDBBytes) throws(LMDBError) -> Bool {
    try key.withLMDBBytes { k in position(k, exact: true) }.get()
  }

  // The generic entry points are inlinable, so that a caller's key type is specialized
  // where it is used; the C calls stay in these non-generic cores.

  @usableFromInline
  func position(_ k: UnsafeRawBufferPointer, exact: Bool) -> Result<Bool, LMDBError> {
    if k.isEmpty && !exact {
      do { return .success(try first()) } catch { return .failure(error) }
    }
    // SAFETY: the key buffer is valid for this call; on success LMDB points `kv` at its own copy.
    var kv = MDB_val(k)
    var vv = MDB_val()
    let rc = mdb_cursor_get(handle, &kv, &vv, exact ? MDB_SET_KEY : MDB_SET_RANGE)
    if rc == MDB_NOTFOUND { return .success(false) }
    do { try check(rc, "mdb_cursor_get") } catch { return .failure(error) }
    return .success(true)
  }

  /// Calls `body` with the current key and value, valid only during the call.
  @inlinable
  public func withCurrent<R>(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> R) throws -> R {
    let (k, v) = try current()
    return try body(k, v)
  }

  /// The current key and value, pointing into the map.
  @usableFromInline
  func current() throws(LMDBError) -> (UnsafeRawBufferPointer, UnsafeRawBufferPointer) {
    var k = MDB_val()
    var v = MDB_val()
    try check(mdb_cursor_get(handle, &k, &v, MDB_GET_CURRENT), "mdb_cursor_get(current)")
    // SAFETY: both point into the map and stay valid until the transaction writes or ends;
    // callers (`withCurrent`'s body) may not keep them.
    let key = UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size)
    let stored = UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)
    guard database.checksummed else { return (key, stored) }
    guard let value = EntryChecksum.verified(key, stored) else {
      throw EntryChecksum.mismatch(mdb_cursor_txn(handle), database, key)
    }
    return (key, value)
  }

  /// The current key, copied.
  public func key() throws -> [UInt8] { try withCurrent { k, _ in [UInt8](k) } }

  /// The current value, copied.
  public func value() throws -> [UInt8] { try withCurrent { _, v in [UInt8](v) } }

  /// Stores `value` under `key` through the cursor (write transactions only).
  ///
  /// With ``PutFlags/append`` on a cursor that appended last, LMDB adds the entry to the
  /// page it is on, without searching the tree again: the fast way to write keys in order.
  @inlinable
  public func put(key: some LMDBBytes, value: some LMDBBytes, flags: PutFlags = []) throws(LMDBError) {
    try key.withLMDBBytes { k in value.withLMDBBytes { v in put(k, v, flags, owned: value.isOwnMemory) } }.get()
  }

  @usableFromInline
  func put(_ k: UnsafeRawBufferPointer, _ v: UnsafeRawBufferPointer, _ flags: PutFlags, owned: Bool)
    -> Result<Void, LMDBError>
  {
    guard database.checksummed else { return putRaw(k, v, flags) }
    // As `TransactionAccess.putBytes`: written into the reserved space when the value is
    // its own memory, else through a buffer of its own (it may lie in the map).
    guard owned else {
      return EntryChecksum.withStored(k, v) { putRaw(k, $0, flags) }
    }
    let crc = EntryChecksum.of(k, v)
    var kv = MDB_val(k)
    var vv = MDB_val(mv_size: v.count + EntryChecksum.size, mv_data: nil)
    do { try check(mdb_cursor_put(handle, &kv, &vv, flags.rawValue | UInt32(MDB_RESERVE)), "mdb_cursor_put") } catch {
      return .failure(error)
    }
    guard let region = vv.mv_data else {
      return .failure(LMDBError(code: MDB_PANIC, operation: "mdb_cursor_put(reserve)"))
    }
    EntryChecksum.fill(region, v, crc)
    return .success(())
  }

  private func putRaw(_ k: UnsafeRawBufferPointer, _ v: UnsafeRawBufferPointer, _ flags: PutFlags)
    -> Result<Void, LMDBError>
  {
    // SAFETY: both buffers are valid for this call; LMDB copies them into its pages.
    var kv = MDB_val(k)
    var vv = MDB_val(v)
    do { try check(mdb_cursor_put(handle, &kv, &vv, flags.rawValue), "mdb_cursor_put") } catch {
      return .failure(error)
    }
    return .success(())
  }

  /// Deletes the entry under the cursor (write transactions only).
  public func deleteCurrent() throws(LMDBError) {
    try check(mdb_cursor_del(handle, 0), "mdb_cursor_del")
  }
}
