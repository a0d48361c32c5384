/// A version a commit states it expects, checked when its turn comes in the writer: if the
/// store has moved on, the commit is refused with a ``ConflictError`` and nothing of it is
/// written (optimistic concurrency, like an event store's expected revision).
///
/// An object's *version* is the first sequence of the last commit that touched it (its
/// `CommitInfo.firstSequence`; see ``Snapshot/version(of:)``): a commit touches the objects
/// it inserts, sets, deletes, and both ends of every link and unlink it makes.
///
/// ```swift
/// let (balance, version) = try store.read { s in
///   (try s.value(account, "balance"), try s.version(of: account))
/// }
/// try await store.commit(expecting: [.object(account, version: version)]) { tx in
///   try tx.set(account, "balance", .int64((balance?.integerValue ?? 0) + 10))
/// }
/// ```
public enum Expectation: Sendable, Hashable {
  /// The object's last commit is still the one at `version` (0: no commit ever touched it).
  case object(ObjectID, version: UInt64)
  /// The log still ends at event `lastSequence` (0: the log is empty): nothing was
  /// committed since.
  case logEnd(UInt64)
}

/// A commit was refused because what it expected has changed: it says what moved and to what.
///
/// Read again, decide again, and retry (see Docs/services.md, "Conflicts and retries").
public struct ConflictError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What moved.
  public enum Subject: Sendable, Hashable {
    /// An object, with its `Entity/N` name.
    case object(ObjectID, name: String)
    /// The whole log.
    case log
  }
  public let subject: Subject
  /// The version the commit expected.
  public let expected: UInt64
  /// The version found: an object's last commit, or the log's last sequence.
  public let actual: UInt64

  public init(subject: Subject, expected: UInt64, actual: UInt64) {
    self.subject = subject
    self.expected = expected
    self.actual = actual
  }

  public var description: String {
    // An expected version beyond the actual one was never reached: nothing moved.
    switch subject {
    case .object(_, let name) where expected > actual:
      "\(name) is at version \(actual): the commit expected version \(expected), which it has not reached"
    case .object(_, let name):
      "\(name) moved: the commit expected version \(expected), but its last commit is now at \(actual)"
    case .log where expected > actual:
      "the log ends at \(actual): the commit expected it to end at \(expected), which it has not reached"
    case .log:
      "the log moved: the commit expected it to end at \(expected), but it now ends at \(actual)"
    }
  }
}
