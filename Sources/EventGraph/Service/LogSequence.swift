internal import LMDB

/// What a follower of the log across version switches receives (``EventStore/followLog(after:)``).
public enum LogEntry: Sendable {
  /// A commit of `version`'s log.
  case commit(Commit, version: Int)
  /// The store switched versions: every commit of the old version's log has been delivered,
  /// and the next commits come from the new version's log, after ``VersionSwitch/position``.
  case switched(VersionSwitch)
}

/// A switch of the store's active version, as a follower of the log meets it.
///
/// The positions correspond: at the switch, the new version's log held exactly the
/// upcast of the old one's commits up to ``sourceEnd``, and ended at ``position``. A
/// follower that had handled the old log up to `sourceEnd` has seen, in the old version's
/// terms, everything the new log holds up to `position`.
public struct VersionSwitch: Sendable, Hashable {
  /// The version the store left, and the one it runs at now.
  public let from: Int
  public let to: Int
  /// The last sequence of the old version's log (it takes no commit after the switch).
  public let sourceEnd: UInt64
  /// The new version's log's last sequence at the switch: the follower continues after it.
  public let position: UInt64
}

extension EventStore {
  /// Follows the log from event `sequence` of this handle's version on, across switches of
  /// the store's version: when a following upcast (or any upcast) switches the store, the
  /// sequence delivers the old log's last commits, then a ``LogEntry/switched(_:)`` notice,
  /// then the new version's commits after the corresponding position.
  ///
  /// ```swift
  /// for try await entry in store.followLog(after: lastSeen) {
  ///   switch entry {
  ///   case .commit(let c, _): handle(c); lastSeen = c.lastSequence
  ///   case .switched(let s): lastSeen = s.position   // positions are per version from here
  ///   }
  /// }
  /// ```
  ///
  /// - Throws (while iterating): ``ErrorCode/versionChanged`` when the store moved to
  ///   a version not made from the followed one (a rollback, two upcasts in a row),
  ///   `CancellationError`, read errors.
  public func followLog(after sequence: UInt64 = 0) -> LogSequence {
    LogSequence(store: self, after: sequence)
  }

  /// The position in `version`'s log that corresponds to `sequence` of the version it was
  /// upcast from: the last sequence of the last commit made from a source commit that
  /// starts at or before `sequence` (0 when none is); a consumer saved at `sequence` in
  /// the old version continues after it.
  ///
  /// - Throws: ``ErrorCode/unknownModelVersion`` when `version` was not made by an
  ///   upcast that recorded its switch.
  public func position(in version: Int, correspondingTo sequence: UInt64) throws -> UInt64 {
    guard let recorded = try versionSwitch(to: version) else { throw StoreError.unknownModelVersion(version) }
    if sequence >= recorded.sourceEnd { return recorded.position }
    let (dbs, _) = try databases(version: version)
    return try readStorage { txn in
      // Backwards from the switch: the upcast's commits keep their sources' order.
      try txn.withCursor(dbs.log) { c in
        var found = try c.seek(StoreKey.sequence(recorded.position)) ? true : try c.last()
        while found {
          let commit = try c.withCurrent { k, v in
            try CommitCodec.decode(v, context: "log entry \(KeyField.u64(k, at: 0) ?? 0)")
          }
          if commit.firstSequence <= recorded.position, let source = commit.metadata.sourceCommit, source <= sequence {
            return commit.lastSequence
          }
          found = try c.previous()
        }
        return 0
      }
    }
  }

  /// The switch to `version` as recorded when an upcast made it active: the version it
  /// was made from and the positions that correspond; `nil` when `version` was not made by
  /// an upcast (or was, before these were recorded).
  public func versionSwitch(to version: Int) throws -> VersionSwitch? {
    let meta = dbs.meta
    return try readStorage { txn in
      guard
        let from = try txn.metaNumber(meta, UpcastKeys(version: version).from),
        let point = try VersionBuild.switchPoint(from: from, to: version, meta: meta, txn)
      else { return nil }
      return VersionSwitch(from: from, to: version, sourceEnd: point.source, position: point.destination)
    }
  }
}

/// The commits of the log from a position on, then live, across version switches:
/// ``EventStore/followLog(after:)``.
public struct LogSequence: AsyncSequence, Sendable {
  public typealias Element = LogEntry
  public typealias Failure = any Error

  let store: EventStore
  let after: UInt64

  public func makeAsyncIterator() -> Iterator { Iterator(follower: LogFollower(store: store, position: after)) }

  public struct Iterator: AsyncIteratorProtocol {
    public typealias Element = LogEntry
    public typealias Failure = any Error
    let follower: LogFollower

    /// The version followed now, and the last sequence of its log delivered.
    public var version: Int { follower.version }
    public var position: UInt64 { follower.position }

    public mutating func next() async throws -> LogEntry? { try await follower.next() }
  }
}

/// The state of a ``LogSequence``'s iterator: the version followed, its databases and a
/// notifier of its log.
final class LogFollower {
  let store: EventStore
  private(set) var version: Int
  private(set) var position: UInt64
  private var dbs: StoreDatabases
  private var model: Model
  /// Wakes on commits to the followed version's log; the store's own for its version.
  private var notifier: LogNotifier
  private var ownsNotifier = false
  private var buffer: [Commit] = []
  private var index = 0

  init(store: EventStore, position: UInt64) {
    self.store = store
    self.position = position
    self.version = store.model.version
    self.dbs = store.dbs
    self.model = store.model
    self.notifier = store.service.notifier
  }

  deinit { if ownsNotifier { notifier.shutdown() } }

  func next() async throws -> LogEntry? {
    while true {
      if index < buffer.count {
        let c = buffer[index]
        index += 1
        position = c.lastSequence
        return .commit(c, version: version)
      }
      try Task.checkCancellation()
      let generation = notifier.generation
      let (dbs, model, position, version) = (self.dbs, self.model, self.position, self.version)
      let read = try store.readStorageHandle { txn -> ReadOutcome in
        let commits = try GraphReader(txn: txn, dbs: dbs, model: model).commits(
          after: position, maxCommits: 256, maxEvents: 100_000)
        let active = try txn.activeVersion(in: dbs.meta)
        guard commits.isEmpty, let active, active != version else { return ReadOutcome(commits: commits) }
        let point = try VersionBuild.switchPoint(from: version, to: active, meta: dbs.meta, txn)
        return ReadOutcome(commits: commits, active: active, switchPoint: point)
      }
      let (commits, active, switchPoint) = (read.commits, read.active, read.switchPoint)
      buffer = commits
      index = 0
      guard buffer.isEmpty else { continue }
      if let active, active != version {
        // The old log ended for good (its writers are refused): move to the new one.
        guard let point = switchPoint else {
          throw StoreError.versionChanged(path: store.path, opened: version, active: active)
        }
        try move(to: active)
        self.position = point.destination
        return .switched(VersionSwitch(from: version, to: active, sourceEnd: point.source, position: point.destination))
      }
      try await notifier.wait(after: generation)
    }
  }

  /// What one short read found: commits after the position, or the store at another
  /// version and where it switched.
  private struct ReadOutcome {
    var commits: [Commit]
    var active: Int?
    var switchPoint: (source: UInt64, destination: UInt64)?
  }

  private func move(to version: Int) throws {
    let (dbs, model) = try store.databases(version: version)
    if ownsNotifier { notifier.shutdown() }
    notifier = StoreService.notifier(env: store.env, dbs: dbs, model: model, path: store.path)
    ownsNotifier = true
    (self.dbs, self.model, self.version) = (dbs, model, version)
  }
}
