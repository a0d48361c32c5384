import Foundation
internal import LMDB
import Synchronization

/// How much history a store keeps, recorded in the store (Docs/retention.md).
///
/// ``EventStore/applyRetention(dryRun:now:)`` truncates by it; ``StoreOptions/retention``
/// has a service apply it as commits land.
public enum RetentionPolicy: Sendable, Hashable {
  /// The last `n` commits (the base not counted).
  case keepCommits(Int)
  /// The commits made in the last `seconds`.
  case keep(seconds: Double)

  /// The cut the policy asks for now.
  public var cut: TruncationCut {
    switch self {
    case .keepCommits(let n): .keepCommits(n)
    case .keep(let seconds): .olderThan(seconds: seconds)
    }
  }

  /// The `meta` text: `commits N` or `seconds S`.
  var text: String {
    switch self {
    case .keepCommits(let n): "commits \(n)"
    case .keep(let seconds): "seconds \(seconds)"
    }
  }

  init?(text: String) {
    let parts = text.split(separator: " ")
    guard parts.count == 2 else { return nil }
    switch parts[0] {
    case "commits":
      guard let n = Int(parts[1]), n >= 0 else { return nil }
      self = .keepCommits(n)
    case "seconds":
      guard let s = Double(parts[1]), s.isFinite, s >= 0 else { return nil }
      self = .keep(seconds: s)
    default: return nil
    }
  }

  /// Refuses a policy that keeps a negative amount, or an age that is not a number.
  func check(path: String) throws {
    switch self {
    case .keepCommits(let n) where n < 0:
      throw StoreError.invalidTruncation(path: path, cut: nil, "a policy must keep 0 commits or more, not \(n)")
    case .keep(let s) where !s.isFinite || s < 0:
      throw StoreError.invalidTruncation(
        path: path, cut: nil, "a policy must keep an age of 0 seconds or more, not \(s)")
    default: break
    }
  }
}

/// When a store applies its retention policy by itself: as commits land, once `commits`
/// commits or `seconds` seconds have passed since it last did (either, when both are given).
///
/// It runs on a thread of its own, off the commit path: the commits before the cut are
/// replayed there, and commits wait only for its last write transaction. A store that
/// takes no commits is not truncated (nothing grows).
public struct RetentionSchedule: Sendable, Hashable {
  public var commits: Int?
  public var seconds: Double?

  public init(commits: Int? = nil, seconds: Double? = nil) {
    self.commits = commits
    self.seconds = seconds
  }
}

/// The last time a store's schedule applied its retention policy: what it truncated, or why
/// it could not.
public struct RetentionRun: Sendable, Hashable {
  public var time: Date
  public var report: TruncationReport?
  /// The error's message, when the truncation failed (the store is as it was).
  public var error: String?
}

extension MetaKey {
  /// The store's retention policy (``RetentionPolicy``), absent when it keeps everything.
  static let retention = "retention"
}

extension EventStore {
  /// The retention policy recorded in the store; `nil` when it keeps all its history.
  public func retentionPolicy() throws -> RetentionPolicy? {
    try readStorage { txn in try Self.retentionPolicy(in: txn, meta: dbs.meta, path: path) }
  }

  static func retentionPolicy(
    in txn: borrowing some TransactionReading & ~Copyable, meta: Database, path: String
  ) throws -> RetentionPolicy? {
    guard let bytes = try txn.get(meta, key: MetaKey.retention) else { return nil }
    let text = String(decoding: bytes, as: UTF8.self)
    guard let policy = RetentionPolicy(text: text) else {
      throw StoreError.corrupt("\(path): the retention policy '\(text)' is not one")
    }
    return policy
  }

  /// Records `policy` in the store (`nil`: keep everything); nothing is truncated until
  /// ``applyRetention(dryRun:now:)`` runs, by hand or by ``StoreOptions/retention``.
  ///
  /// - Throws: ``ErrorCode/invalidTruncation`` for a negative count or age;
  ///   ``ErrorCode/readOnly``.
  public func setRetentionPolicy(_ policy: RetentionPolicy?) throws {
    if options.readOnly { throw StoreError.readOnly(path: path) }
    try policy?.check(path: path)
    try commits.run { batch, _ in
      if let policy {
        try batch.handle.put(batch.dbs.meta, key: MetaKey.retention, value: policy.text)
      } else {
        _ = try batch.handle.delete(batch.dbs.meta, key: MetaKey.retention)
      }
    }
  }

  /// Truncates the log by the recorded policy (see ``truncate(_:dryRun:now:)``); an empty
  /// report when there is no policy or it leaves nothing to fold.
  @discardableResult
  public func applyRetention(dryRun: Bool = false, now: Date = Date()) throws -> TruncationReport {
    if options.readOnly && !dryRun { throw StoreError.readOnly(path: path) }
    return try Self.applyRetention(commits, dryRun: dryRun, now: now)
  }

  static func applyRetention(_ commits: CommitWriter, dryRun: Bool, now: Date) throws -> TruncationReport {
    let policy = try StoreError.reportingStorage(path: commits.path) {
      try commits.env.read { txn in try retentionPolicy(in: txn, meta: commits.dbs.meta, path: commits.path) }
    }
    guard let policy else { return TruncationReport(dryRun: dryRun) }
    return try truncate(commits, policy.cut, dryRun: dryRun, now: now)
  }

  /// The last run of the store's retention schedule (``StoreOptions/retention``); `nil`
  /// before the first, or without a schedule.
  public var lastRetentionRun: RetentionRun? { service.followers.retention?.lastRun }
}

/// Applies a store's retention policy as its commits land (``RetentionSchedule``): told of
/// each committed write transaction, it starts a truncation on a queue of its own when one
/// is due and none runs.
///
/// It holds the store's environment and databases through a writer of its own, never the
/// store, so that no cycle keeps the store alive; the store's shutdown waits for a running
/// truncation (``stop()``).
final class RetentionScheduler: Sendable {
  let schedule: RetentionSchedule
  private let writer: CommitWriter
  private let queue = DispatchQueue(label: "EventGraph retention")
  private let group = DispatchGroup()
  private struct State {
    var commits = 0
    var last = ContinuousClock.now
    var running = false
    var stopped = false
    var lastRun: RetentionRun?
  }
  private let state = Mutex(State())

  init(schedule: RetentionSchedule, env: Environment, dbs: StoreDatabases, model: Model, path: String) {
    self.schedule = schedule
    writer = CommitWriter(env: env, dbs: dbs, model: model, path: path)
  }

  var lastRun: RetentionRun? { state.withLock { $0.lastRun } }

  /// Counts `commits` more commits and starts a truncation when one is due.
  func committed(_ commits: Int) {
    let now = ContinuousClock.now
    let due = state.withLock { s -> Bool in
      s.commits += commits
      guard !s.running, !s.stopped else { return false }
      let byCommits = schedule.commits.map { s.commits >= $0 } ?? false
      let bySeconds = schedule.seconds.map { EventStore.seconds(since: s.last) >= $0 } ?? false
      guard byCommits || bySeconds else { return false }
      s.commits = 0
      s.last = now
      s.running = true
      return true
    }
    guard due else { return }
    queue.async(group: group) { [self] in
      var run = RetentionRun(time: Date())
      do {
        run.report = try EventStore.applyRetention(writer, dryRun: false, now: run.time)
      } catch {
        run.error = "\(error)"
      }
      state.withLock {
        $0.running = false
        $0.lastRun = run
      }
    }
  }

  /// Starts no more truncations and waits for a running one to end.
  func stop() {
    state.withLock { $0.stopped = true }
    group.wait()
  }
}
