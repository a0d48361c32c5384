internal import CLMDB

/// A position in a database, moved by the methods below.
///
/// Closed when dropped.
///
/// Every move returns whether the cursor now stands on an entry.
public struct Cursor: ~Copyable {
  private let handle: OpaquePointer

  init(handle: OpaquePointer) { self.handle = handle }

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
  public func seek(_ key: some LMDBBytes) throws(LMDBError) -> Bool {
    if key.withLMDBBytes({ $0.isEmpty }) { return try first() }
    return try position(key, MDB_SET_RANGE)
  }

  /// Moves to the entry whose key is exactly `key`.
  public func find(_ key: some LMDBBytes) throws(LMDBError) -> Bool { try position(key, MDB_SET_KEY) }

  private func position(_ key: some LMDBBytes, _ op: MDB_cursor_op) throws(LMDBError) -> Bool {
    let rc = key.withLMDBBytes { k in
      // SAFETY: the key buffer is valid for this call; on success LMDB points `kv` at its own copy.
      var kv = MDB_val(mv_size: k.count, mv_data: UnsafeMutableRawPointer(mutating: k.baseAddress))
      var vv = MDB_val()
      return mdb_cursor_get(handle, &kv, &vv, op)
    }
    if rc == MDB_NOTFOUND { return false }
    try check(rc, "mdb_cursor_get")
    return true
  }

  /// Calls `body` with the current key and value, valid only during the call.
  public func withCurrent<R>(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> R) throws -> R {
    var k = MDB_val()
    var v = MDB_val()
    try check(mdb_cursor_get(handle, &k, &v, MDB_GET_CURRENT), "mdb_cursor_get(current)")
    // SAFETY: both point into the map and stay valid until the transaction writes or ends;
    // `body` may not keep them.
    return try body(
      UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size),
      UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
  }

  /// The current key, copied.
  public func key() throws -> [UInt8] { try withCurrent { k, _ in [UInt8](k) } }

  /// The current value, copied.
  public func value() throws -> [UInt8] { try withCurrent { _, v in [UInt8](v) } }

  /// Stores `value` under `key` through the cursor (write transactions only).
  ///
  /// With ``PutFlags/append`` on a cursor that appended last, LMDB adds the entry to the
  /// page it is on, without searching the tree again: the fast way to write keys in order.
  public func put(key: some LMDBBytes, value: some LMDBBytes, flags: PutFlags = []) throws(LMDBError) {
    let rc = key.withLMDBBytes { k in
      value.withLMDBBytes { v in
        // SAFETY: both buffers are valid for this call; LMDB copies them into its pages.
        var kv = MDB_val(mv_size: k.count, mv_data: UnsafeMutableRawPointer(mutating: k.baseAddress))
        var vv = MDB_val(mv_size: v.count, mv_data: UnsafeMutableRawPointer(mutating: v.baseAddress))
        return mdb_cursor_put(handle, &kv, &vv, flags.rawValue)
      }
    }
    try check(rc, "mdb_cursor_put")
  }

  /// Deletes the entry under the cursor (write transactions only).
  public func deleteCurrent() throws(LMDBError) {
    try check(mdb_cursor_del(handle, 0), "mdb_cursor_del")
  }
}
