/// The commits of the log from a position on, then live: ``EventStore/events(after:fromBase:)``.
///
/// Each step that finds nothing buffered reads up to 256 commits in one short read
/// transaction, so a follower never holds a snapshot while it waits; when it has caught up
/// it waits for the store's notifier (commits of this process wake it at once, other
/// processes' commits through inotify on `data.mdb`).
public struct CommitSequence: AsyncSequence, Sendable {
  public typealias Element = Commit
  public typealias Failure = any Error

  let store: EventStore
  let after: UInt64
  /// Whether a position before a truncated log's base starts with the base.
  var fromBase = false

  public func makeAsyncIterator() -> Iterator { Iterator(store: store, position: after, fromBase: fromBase) }

  public struct Iterator: AsyncIteratorProtocol {
    public typealias Element = Commit
    public typealias Failure = any Error

    let store: EventStore
    /// The last sequence delivered.
    public private(set) var position: UInt64
    private var buffer: [Commit] = []
    private var index = 0
    private let fromBase: Bool

    init(store: EventStore, position: UInt64, fromBase: Bool) {
      self.store = store
      self.position = position
      self.fromBase = fromBase
    }

    /// Whether commits already read from the log are waiting to be delivered (a consumer
    /// may save its position when there are none).
    public var hasBuffered: Bool { index < buffer.count }

    /// The next commit, waiting for one when the log has no more.
    ///
    /// - Throws: `CancellationError` when the task is cancelled, or a read error.
    public mutating func next() async throws -> Commit? {
      while true {
        if index < buffer.count {
          let c = buffer[index]
          index += 1
          position = c.lastSequence
          return c
        }
        try Task.checkCancellation()
        let notifier = store.service.notifier
        let generation = notifier.generation
        buffer = try store.service.commits(after: position, maxCommits: 256, fromBase: fromBase)
        index = 0
        if buffer.isEmpty { try await notifier.wait(after: generation) }
      }
    }
  }
}

extension StoreService {
  /// The commits after `position`, read in one short read transaction.
  func commits(after position: UInt64, maxCommits: Int, fromBase: Bool = false) throws -> [Commit] {
    let (dbs, model) = (self.dbs, self.model)
    return try StoreError.reportingStorage(path: path) {
      try env.readHandle { txn in
        try GraphReader(txn: txn, dbs: dbs, model: model).commits(
          after: position, maxCommits: maxCommits, maxEvents: 100_000, fromBase: fromBase)
      }
    }
  }
}
