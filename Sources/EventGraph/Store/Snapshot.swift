internal import LMDB

/// A consistent, read-only view of the graph, valid inside ``EventStore/read(_:)``.
public final class Snapshot: GraphReading {
  let reader: GraphReader<ReadHandle>
  var isOpen = true
  /// Commits decoded for reads of the past, kept for the next object.
  private var commits = CommitIndexCache()

  init(reader: GraphReader<ReadHandle>) { self.reader = reader }

  public var model: Model { reader.model }

  private func checkOpen() throws {
    if !isOpen { throw StoreError.transactionEnded }
  }

  public func object(_ id: ObjectID) throws -> ObjectState? {
    try checkOpen()
    guard let ring = reader.dbs.keyring, let state = try reader.object(id) else { return try reader.object(id) }
    return try ring.open(state, in: reader.txn)
  }

  public func entityID(of id: ObjectID) throws -> EntityID? {
    try checkOpen()
    return try reader.entity(of: id)
  }

  public func related(_ id: ObjectID, _ relationship: PropertyID) throws -> [ObjectID] {
    try checkOpen()
    return try reader.related(id, relationship)
  }

  public func objects(of entity: EntityID) throws -> [ObjectID] {
    try checkOpen()
    return try reader.objects(of: entity)
  }

  /// The last commit's number and the last event's sequence (0, 0 when the log is empty).
  public func logEnd() throws -> (commit: UInt64, sequence: UInt64) {
    try checkOpen()
    return try reader.logEnd()
  }

  /// The commits whose events fall in `from...to`, oldest first, decoded and checked.
  public func commits(from: UInt64 = 1, to: UInt64 = .max) throws -> [Commit] {
    var result: [Commit] = []
    try forEachCommit(from: from, to: to) { result.append($0) }
    return result
  }

  /// Visits the commits whose events fall in `from...to`, oldest first.
  ///
  /// A truncated log starts with its base (``CommitMetadata/base``): from its first
  /// sequence, it comes first; from a later one that it stands for, the events asked for are
  /// gone (``ErrorCode/historyTruncated``).
  public func forEachCommit(from: UInt64 = 1, to: UInt64 = .max, _ body: (Commit) throws -> Void) throws {
    try checkOpen()
    if let b = try reader.logBase(), from > b.firstSequence, from <= b.base.lastSequence {
      throw StoreError.historyTruncated(from, base: b.base)
    }
    // Start at the commit containing `from`, which may begin before it.
    let start = try reader.commit(containing: from)?.firstSequence ?? from
    try reader.txn.forEach(reader.dbs.log, from: StoreKey.sequence(start)) { key, value in
      let seq = KeyField.u64(key, at: 0) ?? 0
      guard seq <= to else { return false }
      try body(try opened(try CommitCodec.decode(value, context: "log entry \(seq)")))
      return true
    }
  }

  /// The first sequences of the commits that touched an object, oldest first.
  public func history(of object: some ObjectReference) throws -> [UInt64] {
    try checkOpen()
    return try reader.history(object.objectID)
  }

  /// The object as it was after event `sequence`: its values and relationships, rebuilt
  /// from its own history (never a scan of the log).
  ///
  /// `nil` when it did not exist then.
  ///
  /// - Throws: ``ErrorCode/sequenceBeyondLog`` when `sequence` lies after the log's last
  ///   event: what an object will be then is not known, and `nil` would say it will not exist;
  ///   ``ErrorCode/historyTruncated`` before the base of a truncated log.
  public func object(_ object: some ObjectReference, asOf sequence: UInt64) throws -> ObjectVersion? {
    try checkOpen()
    let id = object.objectID
    let end = try reader.logEnd().sequence
    guard sequence <= end else { throw StoreError.sequenceBeyondLog(sequence, last: end) }
    try reader.checkHistory(at: sequence)
    guard var version = try ObjectVersion.rebuild(id, asOf: sequence, reader: reader, commits: &commits) else {
      return nil
    }
    if let ring = reader.dbs.keyring { version.state = try ring.open(version.state, in: reader.txn) }
    return version
  }

  /// `commit` with its personal values opened (or marked erased or locked).
  private func opened(_ commit: Commit) throws -> Commit {
    guard let ring = reader.dbs.keyring else { return commit }
    var c = commit
    for (i, e) in c.events.enumerated() {
      if case .set(let o, let a, .sealed(let s)?) = e {
        c.events[i] = .set(o, attribute: a, value: try ring.open(s, in: reader.txn))
      }
    }
    return c
  }
}
