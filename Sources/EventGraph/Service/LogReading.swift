import Foundation
internal import LMDB

// Reads of the log and the history that the service layer needs: an object's version, a
// commit's info by its first sequence, and the commits after a position.

extension GraphReader {
  /// The first sequence of the last commit that touched `o` (0 when none did): the last
  /// `history` key with the object's prefix.
  func version(of o: ObjectID) throws -> UInt64 {
    try versions(of: CollectionOfOne(o))[0]
  }

  /// ``version(of:)`` for many objects, with one cursor (a typed fetch's versions).
  func versions(of objects: some Collection<ObjectID>) throws -> [UInt64] {
    return try txn.withCursor(dbs.history) { cursor in
      var result: [UInt64] = []
      result.reserveCapacity(objects.count)
      for o in objects { result.append(try version(of: o, cursor)) }
      return result
    }
  }

  func version(of o: ObjectID, _ cursor: borrowing Cursor) throws -> UInt64 {
    let found = try cursor.seek(StoreKey.history(o, .max)) ? try cursor.previous() : try cursor.last()
    guard found else { return 0 }
    return try cursor.withCurrent { k, _ in
      KeyField.u64(k, at: 0) == o.rawValue ? KeyField.u64(k, at: 8) ?? 0 : 0
    }
  }

  /// The commit stored at `firstSequence`, as a ``CommitInfo``; `nil` when no commit starts
  /// there.
  func commitInfo(at firstSequence: UInt64) throws -> CommitInfo? {
    try txn.withValue(dbs.log, key: StoreKey.sequence(firstSequence)) { bytes in
      let c = try CommitCodec.decode(bytes, context: "log entry \(firstSequence)")
      return CommitInfo(number: c.number, firstSequence: c.firstSequence, lastSequence: c.lastSequence, time: c.time)
    }
  }

  /// The commits that start after event `position`, oldest first: at most `maxCommits`,
  /// and no more once `maxEvents` events are gathered (always at least one commit when
  /// there is one).
  ///
  /// - Parameter fromBase: for a position before the base of a truncated log, whether to
  ///   start with the base rather than refuse (``ErrorCode/historyTruncated``).
  func commits(after position: UInt64, maxCommits: Int, maxEvents: Int = .max, fromBase: Bool = false) throws
    -> [Commit]
  {
    var result: [Commit] = []
    guard position < .max else { return result }
    let position = try readablePosition(after: position, fromBase: fromBase)
    var events = 0
    try txn.forEach(dbs.log, from: StoreKey.sequence(position + 1)) { key, value in
      let seq = KeyField.u64(key, at: 0) ?? 0
      let c = try CommitCodec.decode(value, context: "log entry \(seq)")
      result.append(c)
      events += c.events.count
      return result.count < maxCommits && events < maxEvents
    }
    return result
  }
}

extension Snapshot {
  /// The object's version: the first sequence of the last commit that touched it.
  ///
  /// It is 0 when no commit did. State it in ``Expectation/object(_:version:)`` to commit
  /// only if nobody changed the object since this snapshot.
  public func version(of object: some ObjectReference) throws -> UInt64 {
    guard isOpen else { throw StoreError.transactionEnded }
    return try reader.version(of: object.objectID)
  }
}

extension Transaction {
  /// The object's version as this transaction sees it (see ``Snapshot/version(of:)``).
  public func version(of object: some ObjectReference) throws -> UInt64 {
    guard isOpen else { throw StoreError.transactionEnded }
    return try projector.reader.version(of: object.objectID)
  }
}
