extension EventStore {
  /// Commits what `body` does, from any task: concurrent commits are batched into one LMDB
  /// write transaction and one fsync by the store's writer thread; a commit that is refused
  /// is rolled back alone while the others of its batch land.
  ///
  /// The call returns once the batch that holds the commit is committed (durable, with the
  /// default ``StoreOptions/Durability/durable``). In order, the writer:
  ///
  /// 1. returns the first commit's info without running `body` when `idempotencyKey` is
  ///    already in the store (``CommitResult/isDuplicate``);
  /// 2. checks `expectations`, refusing the commit with a ``ConflictError`` when one does
  ///    not hold;
  /// 3. runs `body` on the writer thread, validates the changes (as ``write(metadata:_:)``
  ///    does), appends the commit and applies the inline projections.
  ///
  /// ```swift
  /// let result = try await store.commit(idempotencyKey: request.id) { tx in
  ///   try tx.insert("Order", ["reference": .string(reference)])
  /// }
  /// print(result.commit?.firstSequence ?? 0, result.isDuplicate)
  /// ```
  ///
  /// `body` runs on the writer thread, between other commits: keep it short, make it act
  /// only through `tx` (it runs again when the map has to grow, and when another commit of
  /// its batch is refused after writing: the batch runs again, each commit in a nested
  /// transaction), and never call the store's synchronous ``write(metadata:_:)`` from it.
  ///
  /// **Cancellation.** A commit whose task is cancelled before the writer takes it is
  /// removed: the call throws `CancellationError` and nothing was written. Once the writer
  /// has taken it, it runs to the end, and the call returns its result (the commit is in)
  /// or its error (it is out), whatever the cancellation.
  ///
  /// - Parameters:
  ///   - expectations: versions that must still hold (optimistic concurrency).
  ///   - idempotencyKey: makes a retry land once: 1 to 400 bytes, kept in the store for
  ///     good. Overrides `metadata.idempotencyKey`.
  ///   - metadata: author, correlation ID and other metadata of the commit.
  ///   - body: the changes; its value comes back in ``CommitResult/value``.
  /// - Throws: what `body` throws, ``ConflictError``, ``StoreError`` (validation names the
  ///   object and property; ``ErrorCode/readOnly``), ``ServiceError``, `CancellationError`,
  ///   or an LMDB error.
  @discardableResult
  public func commit<R: Sendable>(
    expecting expectations: [Expectation] = [], idempotencyKey: String? = nil, metadata: CommitMetadata = .init(),
    _ body: @escaping @Sendable (Transaction) throws -> R
  ) async throws -> CommitResult<R> {
    var metadata = metadata
    if let idempotencyKey { metadata.idempotencyKey = idempotencyKey }
    let work = CommitWork(expectations: expectations, metadata: metadata, body: { tx in try body(tx) })
    switch try await service.submit(.commit(work)) {
    case .committed(let info, let value):
      if let info { try await acknowledge(info) }
      return CommitResult(commit: info, value: value as? R, isDuplicate: false)
    case .duplicate(let info):
      try await acknowledge(info)
      return CommitResult(commit: info, value: nil, isDuplicate: true)
    case .done:
      return CommitResult(commit: nil, value: nil, isDuplicate: false)
    }
  }

  /// Follows the log from event `sequence` on.
  ///
  /// The sequence holds the commits that start after event `sequence`, oldest first, read
  /// from the log in short read transactions and then, once caught up, as they land — from
  /// this process or any other — without gaps or duplicates. It never ends by itself; it
  /// throws `CancellationError` when its task is cancelled.
  ///
  /// ```swift
  /// for try await commit in store.events(after: lastSeen) {
  ///   handle(commit)
  ///   lastSeen = commit.lastSequence
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - sequence: the last sequence already seen (`commit.lastSequence` of the last commit
  ///     handled); 0 for the whole log.
  ///   - fromBase: for a sequence before the base of a truncated log, whether to start with
  ///     the base (a commit holding the objects as they were at its cut) rather than throw
  ///     ``ErrorCode/historyTruncated`` at the first step: the commits after `sequence`
  ///     are gone (Docs/retention.md).
  public func events(after sequence: UInt64 = 0, fromBase: Bool = false) -> CommitSequence {
    CommitSequence(store: self, after: sequence, fromBase: fromBase)
  }

  /// The log's last sequence (0 for an empty log), read in a short snapshot.
  public func lastSequence() throws -> UInt64 {
    try read { try $0.logEnd().sequence }
  }
}
