/// Time travel goes from commit to commit: the states a reader may be shown are those a
/// commit left, never one inside a commit (where a required value may not be set yet).
extension Snapshot {
  /// The last event of commit `number`: the sequence at which the state is the one the
  /// commit left (0 for commit 0, the empty store before the first commit).
  ///
  /// - Throws: ``ErrorCode/commitBeyondLog``; ``ErrorCode/historyTruncated`` for a commit
  ///   that a truncated log's base replaced (the base's own number gives its last sequence).
  public func lastSequence(ofCommit number: UInt64) throws -> UInt64 {
    let end = try logEnd()
    guard number <= end.commit else { throw StoreError.commitBeyondLog(number, last: end.commit) }
    if let b = try reader.logBase(), number < b.number {
      throw StoreError.historyTruncated(number == 0 ? 0 : b.firstSequence, base: b.base)
    }
    if number == 0 { return 0 }
    guard let first = try reader.firstSequence(ofCommit: number), let c = try reader.commit(containing: first) else {
      throw StoreError.corrupt("the log has no commit \(number), although its last commit is \(end.commit)")
    }
    return c.lastSequence
  }

  /// `sequence`, when a commit ends there (or it is 0, before the first commit).
  ///
  /// - Throws: ``ErrorCode/sequenceInsideCommit`` naming the commit
  ///   that holds it and both its ends; ``ErrorCode/sequenceBeyondLog``;
  ///   ``ErrorCode/historyTruncated`` before the base of a truncated log.
  public func commitEnd(at sequence: UInt64) throws -> UInt64 {
    let end = try logEnd().sequence
    guard sequence <= end else { throw StoreError.sequenceBeyondLog(sequence, last: end) }
    try reader.checkHistory(at: sequence)
    if sequence == 0 { return 0 }
    guard let c = try reader.commit(containing: sequence) else {
      throw StoreError.corrupt("no commit of the log holds event \(sequence), although the log ends at \(end)")
    }
    guard c.lastSequence == sequence else {
      throw StoreError.sequenceInsideCommit(sequence, commit: c.number, first: c.firstSequence, last: c.lastSequence)
    }
    return sequence
  }

}
