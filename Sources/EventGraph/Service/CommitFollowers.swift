internal import LMDB

/// What follows one store's commits: its inline projections, which follow each commit in
/// its transaction, and the notifier that wakes followers of its log once the transaction
/// is committed.
///
/// The store's ``CommitWriter`` holds it from its creation and tells it of every commit,
/// whichever writer appends it; the service holds it too. It refers to neither, so no cycle
/// needs a weak reference — a weak reference moves an object's reference counts to a side
/// table, which makes every retain of it a slow one, on every commit.
final class CommitFollowers: CommitObserver {
  let notifier: LogNotifier
  let projections = ProjectionRegistry()
  /// Applies the store's retention policy as commits land, when the store was opened with
  /// a schedule (``StoreOptions/retention``).
  let retention: RetentionScheduler?

  init(env: Environment, dbs: StoreDatabases, model: Model, path: String, retention: RetentionSchedule? = nil) {
    notifier = StoreService.notifier(env: env, dbs: dbs, model: model, path: path)
    self.retention = retention.map { RetentionScheduler(schedule: $0, env: env, dbs: dbs, model: model, path: path) }
  }

  func appended(_ info: CommitInfo, of tx: Transaction?, in batch: CommitBatch) throws {
    try projections.applyInline(after: info, of: tx, in: batch)
  }

  func committed(through lastSequence: UInt64, commits: Int) {
    notifier.committed(lastSequence: lastSequence)
    retention?.committed(commits)
  }
}
