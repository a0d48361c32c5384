import EventGraphLocking
import Foundation
internal import LMDB
import Synchronization

/// What a store needs to serve a long-running service.
///
/// It holds the writer thread and its queue, the notifier that wakes followers of the log,
/// the consumers' positions and the projections registered for inline maintenance. One per
/// ``EventStore``; threads start on first use.
final class StoreService: Sendable {
  let env: Environment
  let dbs: StoreDatabases
  let model: Model
  let path: String
  let readOnly: Bool
  let queue = WriteQueue()
  /// Where the writer hands its callers' outcomes, to be resumed off its thread.
  let completions = DispatchQueue(label: "EventGraph commit completions")
  /// The inline projections and the notifier, which the writer tells of every commit.
  let followers: CommitFollowers
  var notifier: LogNotifier { followers.notifier }
  var projections: ProjectionRegistry { followers.projections }
  private let writer = Locked<WriterThread?>(nil)
  /// Write transactions the writer thread has committed (each one batch), for benchmarks.
  private let batches = Atomic<Int>(0)
  /// Databases opened after the store (consumers, projections), by name.
  private let opened = Locked<[String: Database]>([:])

  /// The writer thread's path to the log.
  let commits: CommitWriter

  init(commits: CommitWriter, followers: CommitFollowers, readOnly: Bool) {
    self.commits = commits
    self.followers = followers
    let (env, dbs, model) = (commits.env, commits.dbs, commits.model)
    self.env = env
    self.dbs = dbs
    self.model = model
    self.path = commits.path
    self.readOnly = readOnly
  }

  /// A notifier of `dbs`'s log, which also wakes its followers when the store switches
  /// away from that version (the log then ends for good: followers move on,
  /// ``LogSequence``).
  static func notifier(env: Environment, dbs: StoreDatabases, model: Model, path: String) -> LogNotifier {
    LogNotifier(dataFile: path + "/data.mdb") {
      try? env.readHandle { txn in
        let active = try txn.activeVersion(in: dbs.meta)
        guard active == dbs.version else { return .max }
        return try GraphReader(txn: txn, dbs: dbs, model: model).logEnd().sequence
      }
    }
  }

  // MARK: - Writing through the writer thread

  /// Hands `work` to the writer thread and waits for the batch that ran it to be committed.
  func submit(_ work: WriteWork) async throws -> WriteOutcome {
    if readOnly { throw StoreError.readOnly(path: path) }
    writer.withLock { w in
      if w == nil { w = WriterThread(serving: self) }
    }
    return try await queue.submit(WriteRequest(work), path: path)
  }

  /// Runs `body` in a nested transaction of the next batch (a write that appends no commit).
  func sideWrite(_ body: @escaping @Sendable (WriteHandle) throws -> Void) async throws {
    _ = try await submit(.side(body))
  }

  /// How many batches (write transactions) the writer thread has committed.
  var batchesCommitted: Int { batches.load(ordering: .relaxed) }

  func countBatch() { batches.add(1, ordering: .relaxed) }

  // MARK: - Consumers' positions

  /// The `consumers.vN` database, opened (created unless read-only) on first use; `nil` in a
  /// read-only store that has none yet.
  func consumers() throws -> Database? {
    try database(StoreDatabases.name("consumers", version: dbs.version), create: !readOnly)
  }

  /// Opens a named database once, under a lock.
  ///
  /// LMDB forbids opening databases from two transactions of a process at once. Never call
  /// while this thread holds a write transaction.
  func database(_ name: String, create: Bool) throws -> Database? {
    try opened.withLock { cache in
      if let db = cache[name] { return db }
      let db = try env.openDatabase(name, create: create)
      cache[name] = db
      return db
    }
  }

  /// A position (the last sequence a consumer or projection has dealt with); 0 when none.
  static func position(_ key: String, in db: Database?, _ txn: borrowing some TransactionReading & ~Copyable) throws
    -> UInt64
  {
    guard let db else { return 0 }
    let stored = try txn.withValue(db, key: key) { BigEndianKey.decode($0) }
    return (stored ?? nil) ?? 0
  }

  // MARK: - Closing

  /// Stops the threads, letting the writer finish what is queued.
  ///
  /// Called by the store's deinit.
  func shutdown() {
    followers.retention?.stop()
    queue.close()
    let w = writer.withLock { $0 }
    // A store released on its own writer thread (its last reference was in a commit closure)
    // cannot wait for that thread; the thread ends by itself once the queue is drained.
    if let w, !w.isCurrent { w.join() }
    notifier.shutdown()
  }
}
