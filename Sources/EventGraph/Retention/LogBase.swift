internal import LMDB

// The start of a truncated log: its base (Docs/retention.md). Every read of a past state,
// every position a reader continues from and every commit asked for by number checks here
// that the history it needs is still there, so that none is answered with a later state
// (the base's) as if it were the earlier one.

/// The base a truncated log starts with, as its header reads.
struct LogBase {
  /// The base's commit number: that of the last commit it replaced.
  let number: UInt64
  /// Its key: the first sequence of the log.
  let firstSequence: UInt64
  /// What it stands for, without its versions, deleted identities and order keys.
  let base: HistoryBase

  /// The first sequence of the first commit after the base: the cut.
  var cut: UInt64 { base.lastSequence + 1 }
}

extension GraphReader {
  /// The base the log starts with; `nil` when it was never truncated.
  func logBase() throws -> LogBase? {
    try txn.withCursor(dbs.log) { cursor in
      guard try cursor.first() else { return nil }
      return try cursor.withCurrent { k, v in
        let h = try CommitCodec.decodeHeader(v, context: "log entry \(KeyField.u64(k, at: 0) ?? 0)")
        return h.metadata.base.map { LogBase(number: h.number, firstSequence: h.firstSequence, base: $0) }
      }
    }
  }

  /// Refuses a read of the state as of `sequence` when the history before it was truncated:
  /// the states from the base's last sequence on are kept, the ones before are not.
  ///
  /// - Throws: ``ErrorCode/historyTruncated``.
  func checkHistory(at sequence: UInt64) throws {
    if let b = try logBase(), sequence < b.base.lastSequence {
      throw StoreError.historyTruncated(sequence, base: b.base)
    }
  }

  /// Refuses a read of the commits after `position` that would skip what the base stands
  /// for: a position before its last sequence (0 included) has lost the commits it needs.
  ///
  /// - Returns: where to read from: `position`, or, when `fromBase` and the position lies
  ///   before the base's end, the base's key minus one (the base is read first).
  func readablePosition(after position: UInt64, fromBase: Bool) throws -> UInt64 {
    guard let b = try logBase(), position < b.base.lastSequence else { return position }
    guard fromBase else { throw StoreError.historyTruncated(position, base: b.base) }
    return b.firstSequence - 1
  }
}
