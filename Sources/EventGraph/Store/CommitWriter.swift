import Foundation
internal import LMDB

/// The one path by which commits reach the log.
///
/// Every writer of commits — ``EventStore/write(metadata:_:)``, the service's writer thread,
/// clone, snapshot, rebuild and verify's replay, the upcaster, import and append — runs its
/// write transaction here: ``run(_:)`` begins it, hands the caller a ``CommitBatch`` that
/// appends commits one after another, commits it, and when LMDB reports the map full grows
/// the map and runs the caller's closure again from the start in a fresh transaction.
///
/// ```swift
/// let info = try writer.run { batch, _ in
///   try batch.checkWritable()
///   let tx = batch.transaction(metadata: metadata)
///   try tx.insert("AddressBook", ["firstName": .string("桃")])
///   return try batch.commit(tx)
/// }
/// ```
final class CommitWriter: Sendable {
  let env: Environment
  let dbs: StoreDatabases
  let model: Model
  let path: String

  /// What follows this log's commits (the store's inline projections and notifier), told by
  /// every batch of ``run(_:)``; `nil` for a writer nothing follows (a rebuild at open).
  ///
  /// Fixed at creation and held strongly: the observer refers to neither this writer nor
  /// the service, so no cycle needs breaking, and no commit pays for a lock or a weak load.
  let observer: (any CommitObserver)?
  /// What this writer's transactions are counted in (``EventStore/metrics()``); `nil` for
  /// a writer of a replay or a scratch store, which nobody monitors.
  let metrics: CommitMetrics?

  init(
    env: Environment, dbs: StoreDatabases, model: Model, path: String, observer: (any CommitObserver)? = nil,
    metrics: CommitMetrics? = nil
  ) {
    self.env = env
    self.dbs = dbs
    self.model = model
    self.path = path
    self.observer = observer
    self.metrics = metrics
  }

  /// Runs `body` in one write transaction and commits it.
  ///
  /// When LMDB reports the map full — while `body` writes or when the transaction commits —
  /// nothing of the transaction lands: the map grows and `body` runs again in a fresh one,
  /// told how many times it ran before (a batch of the writer thread takes no more requests
  /// in a rerun). So `body` should act only through the batch.
  ///
  /// - Throws: what `body` throws (nothing is written then), or the store's error for one
  ///   of LMDB's (``StoreError/reporting(_:path:)``: a damaged projection, a failed write).
  func run<R>(_ body: (CommitBatch, _ reruns: Int) throws -> R) throws -> R {
    try StoreError.reportingStorage(path: path) { try runGrowing(body) }
  }

  /// ``run(_:)``, with LMDB's errors as LMDB reports them.
  private func runGrowing<R>(_ body: (CommitBatch, _ reruns: Int) throws -> R) throws -> R {
    var reruns = 0
    while true {
      try env.growIfNearlyFull()
      let started = metrics == nil ? 0 : CommitMetrics.now()
      let txn = WriteHandle(try env.beginWrite())
      do {
        let batch = CommitBatch(handle: txn, dbs: dbs, model: model, path: path)
        batch.observer = observer
        // The batch, and what shares its transaction, end with it whatever happens (the
        // transaction is aborted here unless committed).
        defer {
          batch.isOpen = false
          txn.end()
        }
        let result = try body(batch, reruns)
        // A subject's new key reaches the disk before the first commit sealed with it, and
        // an erased one is overwritten as soon as the erasure is committed.
        try dbs.keyring?.syncIfNeeded()
        let committing = metrics == nil ? 0 : CommitMetrics.now()
        try txn.commit()
        if let metrics, batch.appendedCommits > 0 {
          let now = CommitMetrics.now()
          metrics.record(
            total: now &- started, lmdbCommit: now &- committing, commits: batch.appendedCommits,
            events: batch.appendedEvents)
        }
        if batch.erased { try dbs.keyring?.finishErasures(env) }
        if let last = batch.appendedThrough { batch.observer?.committed(through: last, commits: batch.appendedCommits) }
        return result
      } catch let e as LMDBError where e == .mapFull {
        try env.grow()
        reruns += 1
      }
    }
  }
}

/// What follows the commits of one store's log — its inline projections and the followers
/// its notifier wakes (``CommitFollowers``) — told of each by the batch that appends it,
/// whichever writer runs the batch (``EventStore/write(metadata:_:)``, the writer thread,
/// clone, snapshot, append, import).
protocol CommitObserver: AnyObject, Sendable {
  /// Called in the batch's transaction right after `info` was appended; `tx` is the
  /// transaction that made it, `nil` for a commit appended from events or a record made
  /// elsewhere (then its events are in the log). A throw refuses the commit.
  func appended(_ info: CommitInfo, of tx: Transaction?, in batch: CommitBatch) throws
  /// Called once the write transaction holding `commits` commits, up to `lastSequence`, is
  /// committed.
  func committed(through lastSequence: UInt64, commits: Int)
}

/// The log's end: the last commit's number and its last event's sequence (0 and 0 when empty).
struct LogEnd: Sendable, Hashable {
  var commit: UInt64
  var sequence: UInt64
}

/// One write transaction of the ``CommitWriter``: the commits appended in it, in order, and
/// what they leave for the next one to know without reading it back (the log's end, the
/// next identity).
final class CommitBatch {
  /// The transaction, shared with what the batch makes; the writer ends it (and clears
  /// ``isOpen``) when the batch ends.
  let handle: WriteHandle
  let dbs: StoreDatabases
  let model: Model
  let path: String
  fileprivate(set) var isOpen = true
  /// Whether a commit of the batch erased a subject (its key is destroyed once the
  /// transaction is committed).
  var erased = false
  /// The log's end as this batch's commits left it, `nil` until first needed (a caller that
  /// knows it, as a handle whose last commit was the transaction before, may set it).
  var logEnd: LogEnd?
  /// The identity the next insert gets, `nil` until the first insert reads it.
  var nextObject: UInt64?
  /// A projector left by the batch's last commit, for the next to reuse its buffers
  /// (commits run straight in the writer thread's batches).
  private var sharedProjector: Projector?
  /// What follows the log this batch appends to; `nil` for a batch writing another
  /// version's log (``writing(to:model:)``).
  fileprivate(set) var observer: (any CommitObserver)?
  /// The last sequence of the last commit this batch appended, `nil` until one is.
  var appendedThrough: UInt64?
  /// How many commits, and events, this batch appended (for ``CommitMetrics``).
  var appendedCommits = 0
  var appendedEvents = 0

  init(handle: WriteHandle, dbs: StoreDatabases, model: Model, path: String) {
    self.handle = handle
    self.dbs = dbs
    self.model = model
    self.path = path
  }

  /// The checks made before the first commit of a transaction: no rebuild left
  /// unfinished, and the active model version still the one this store was opened at.
  func checkWritable() throws {
    try dbs.checkWritable(handle, model: model, path: path)
  }

  /// The first of ``checkWritable()``'s checks alone: no rebuild left unfinished.
  func checkNoRebuild() throws { try dbs.checkNoRebuild(handle) }

  /// The second of ``checkWritable()``'s checks alone: the active version is this batch's.
  func checkActive() throws { try dbs.checkActive(handle, model: model, path: path) }

  /// A reader of the graph as this batch's commits left it.
  var reader: GraphReader<WriteHandle> { GraphReader(txn: handle, dbs: dbs, model: model) }

  /// The log's end, read once and then kept up to date by the commits of this batch.
  func currentLogEnd() throws -> LogEnd {
    if let logEnd { return logEnd }
    let end = try reader.logEnd()
    let known = LogEnd(commit: end.commit, sequence: end.sequence)
    logEnd = known
    return known
  }

  /// The identity for an insert: the next one counted from the last identity in the store.
  func allocateObject() throws -> UInt64 {
    let next = try nextObject ?? (reader.lastObjectID() + 1)
    nextObject = next + 1
    return next
  }

  // MARK: - Commits recorded by a transaction

  /// A transaction for the user's closure, writing into this batch.
  ///
  /// With `sharingBuffers`, commits made one after another reuse one projector's buffers
  /// (its state of the last commit is dropped first).
  func transaction(metadata: CommitMetadata, sharingBuffers: Bool = false) -> Transaction {
    guard sharingBuffers else {
      return Transaction(batch: self, projector: Projector(txn: handle, dbs: dbs, model: model), metadata: metadata)
    }
    let projector = sharedProjector ?? Projector(txn: handle, dbs: dbs, model: model)
    sharedProjector = projector
    projector.startCommit()
    return Transaction(batch: self, projector: projector, metadata: metadata)
  }

  /// Validates the objects `tx` touched, appends its events as one commit and flushes the
  /// projection; `nil` when it recorded no event.
  ///
  /// - Parameters:
  ///   - time: the commit's time; now when `nil` (an upcast keeps its source commit's).
  ///   - log: whether a log record is written; an intermediate step of an upcast chain keeps
  ///     only the projection, the next step's source state.
  /// - Throws: ``ErrorCode/validation`` and the store's errors;
  ///   the transaction may have written then, and must be dropped.
  func commit(_ tx: Transaction, time: Date? = nil, log: Bool = true) throws -> CommitInfo? {
    try tx.checkOpen()
    if let key = tx.metadata.idempotencyKey, key != tx.givenKey {
      try refuseRepeated(key)  // set by the closure: a retry still lands once
    }
    if !tx.deferredPersonal.isEmpty { try tx.sealDeferred() }
    guard !tx.events.isEmpty else { return nil }
    // A store of personal data is written with its key; an erasure alone needs none.
    if tx.model.hasPersonalAttributes, tx.events.contains(where: { if case .erase = $0 { false } else { true } }) {
      _ = try tx.requireKeyring()
    }
    let projector = tx.projector
    try Validator(model: tx.model, graph: tx).validate(projector.sortedTouched())
    guard log else {
      try projector.keepUniqueness(keepingKeys: false)
      projector.forgetTouched()
      try projector.writeObjects()
      return nil
    }
    let end = try currentLogEnd()
    let commit = Commit(
      number: end.commit + 1, firstSequence: end.sequence + 1, time: time ?? Date(), modelVersion: tx.model.version,
      metadata: tx.metadata, events: tx.events)
    let info = try append(
      commit, record: CommitCodec.encode(commit), lastSequence: commit.lastSequence, projector: projector)
    try observer?.appended(info, of: tx, in: self)
    return info
  }

  // MARK: - Idempotency keys

  /// The longest idempotency key, in bytes of UTF-8 (LMDB's keys are at most 511).
  static let maxKeyLength = 400

  /// The first commit that carried `key`, `nil` when none did: a commit given a key that
  /// is already in the store is a retry, answered with that commit (the closure not run).
  ///
  /// - Throws: ``ServiceError`` `invalidIdempotencyKey` for an empty key or one over
  ///   ``maxKeyLength`` bytes; ``ErrorCode/corrupt`` when the key names no commit.
  func firstCommit(withKey key: String) throws -> CommitInfo? {
    if key.utf8.isEmpty || key.utf8.count > Self.maxKeyLength { throw ServiceError.invalidIdempotencyKey(key) }
    guard let first = try dbs.firstSequence(withKey: key, in: handle) else { return nil }
    guard let info = try reader.commitInfo(at: first) else {
      throw StoreError.corrupt("idempotency key '\(key)' points at sequence \(first), where no commit starts")
    }
    return info
  }

  /// Refuses a key set inside a commit's closure that an earlier commit carried: the
  /// closure ran, so there is no first value to return instead.
  private func refuseRepeated(_ key: String) throws {
    if let first = try firstCommit(withKey: key) { throw ServiceError.alreadyCommitted(key: key, commit: first) }
  }

  // MARK: - Commits made elsewhere

  /// Applies `events` and appends them as one commit, unchecked by the model's rules (a
  /// snapshot's replay of a valid graph).
  func append(_ events: [Event], time: Date, metadata: CommitMetadata) throws -> CommitInfo {
    let projector = Projector(txn: handle, dbs: dbs, model: model)
    for e in events { try projector.apply(e) }
    let end = try currentLogEnd()
    let commit = Commit(
      number: end.commit + 1, firstSequence: end.sequence + 1, time: time, modelVersion: model.version,
      metadata: metadata, events: events)
    let info = try append(
      commit, record: CommitCodec.encode(commit), lastSequence: commit.lastSequence, projector: projector)
    try observer?.appended(info, of: nil, in: self)
    return info
  }

  /// Appends a commit whose events were encoded as they were made (a clone's) and whose
  /// object records the caller wrote; `projector` has the rest of the projection to flush.
  func append(body: CommitCodec.EventBody, metadata: CommitMetadata, projector: Projector) throws -> CommitInfo {
    let end = try currentLogEnd()
    let commit = Commit(
      number: end.commit + 1, firstSequence: end.sequence + 1, time: Date(), modelVersion: model.version,
      metadata: metadata, events: [])
    let info = try append(
      commit, record: CommitCodec.encode(commit, body: body),
      lastSequence: commit.firstSequence + UInt64(body.count) - 1, projector: projector)
    try observer?.appended(info, of: nil, in: self)
    return info
  }

  /// Writes a commit whose events were applied: the log record, the idempotency key, and
  /// the flushed projection; the batch's log end moves on.
  private func append(_ commit: Commit, record bytes: [UInt8], lastSequence: UInt64, projector: Projector)
    throws -> CommitInfo
  {
    try handle.put(dbs.log, key: StoreKey.sequence(commit.firstSequence), value: bytes, flags: .append)
    if let key = commit.metadata.idempotencyKey {
      try dbs.record(key: key, firstSequence: commit.firstSequence, in: handle)
    }
    try projector.flush(commitSequence: commit.firstSequence)
    logEnd = LogEnd(commit: commit.number, sequence: lastSequence)
    appendedThrough = lastSequence
    appendedCommits += 1
    appendedEvents += Int(lastSequence - commit.firstSequence + 1)
    let time = Date(timeIntervalSince1970: Double(CommitCodec.milliseconds(commit.time)) / 1000)
    return CommitInfo(
      number: commit.number, firstSequence: commit.firstSequence, lastSequence: lastSequence, time: time)
  }

  // MARK: - Nesting and other versions

  /// A batch in the same transaction that writes the databases of another version (an
  /// upcast's destination, or a step of its chain), starting from that log's end.
  func writing(to dbs: StoreDatabases, model: Model) -> CommitBatch {
    CommitBatch(handle: handle, dbs: dbs, model: model, path: path)
  }

  /// Runs `body` in a nested transaction whose batch starts from this one's ends; they move
  /// on only when `body` returns (a refused commit of the writer thread's batch is rolled
  /// back alone).
  func nested<R>(_ body: (CommitBatch) throws -> R) throws -> R {
    try handle.nested {
      let inner = CommitBatch(handle: handle, dbs: dbs, model: model, path: path)
      defer { inner.isOpen = false }
      inner.observer = observer
      inner.logEnd = logEnd
      inner.nextObject = nextObject
      let result = try body(inner)
      logEnd = inner.logEnd
      nextObject = inner.nextObject
      appendedThrough = inner.appendedThrough ?? appendedThrough
      appendedCommits += inner.appendedCommits
      appendedEvents += inner.appendedEvents
      return result
    }
  }
}
