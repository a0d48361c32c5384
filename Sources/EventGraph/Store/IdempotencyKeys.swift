internal import LMDB

/// Idempotency keys in `dedupe.vN`: each key a commit carried, with the first sequence of
/// that commit. Written with the commit's log entry (``CommitBatch``) or by a replay of it,
/// read by ``CommitBatch/firstCommit(withKey:)``; nothing else touches the database.
extension StoreDatabases {
  /// Records that the commit starting at `firstSequence` carried `key`.
  func record(key: String, firstSequence: UInt64, in txn: WriteHandle) throws {
    try txn.put(dedupe, key: key, value: BigEndianKey(firstSequence))
  }

  /// The first sequence of the commit that carried `key`, `nil` when none did.
  func firstSequence(withKey key: String, in txn: WriteHandle) throws -> UInt64? {
    try txn.withValue(dedupe, key: key) { BigEndianKey.decode($0) } ?? nil
  }
}
