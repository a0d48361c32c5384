internal import LMDB

// The one place an expectation is checked: the writer thread before a commit of
// `EventStore.commit(expecting:…)` runs, and `Transaction.require(_:)` inside the
// synchronous `write`, read the same versions and refuse with the same error.

extension GraphReader {
  /// Refuses with a ``ConflictError`` when `expectation` does not hold in this transaction.
  func check(_ expectation: Expectation) throws {
    switch expectation {
    case .logEnd(let expected):
      let actual = try logEnd().sequence
      guard actual == expected else { throw ConflictError(subject: .log, expected: expected, actual: actual) }
    case .object(let o, let expected):
      let actual = try version(of: o)
      guard actual == expected else {
        throw ConflictError(subject: .object(o, name: display(o)), expected: expected, actual: actual)
      }
    }
  }
}

extension Transaction {
  /// Refuses the commit with a ``ConflictError`` unless every expectation holds, as
  /// ``EventStore/commit(expecting:idempotencyKey:metadata:_:)`` does before it runs its
  /// closure: call it first in a synchronous ``EventStore/write(metadata:_:)``.
  ///
  /// ```swift
  /// try store.write { tx in
  ///   try tx.require([.object(account, version: seen)])
  ///   try tx.set(account, "balance", .int64(balance + 10))
  /// }
  /// ```
  ///
  /// The versions are read in this write transaction, so nothing can move between the
  /// check and the commit. Call it before any change: an object's version is its last
  /// commit's, and the log's end is the last commit's, whatever this transaction did so far.
  ///
  /// - Throws: ``ConflictError`` naming what moved and its current version.
  public func require(_ expectations: [Expectation]) throws {
    try checkOpen()
    for e in expectations { try projector.reader.check(e) }
  }
}
