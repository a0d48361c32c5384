import Foundation
internal import LMDB

/// One unit of work for the writer thread.
enum WriteWork: Sendable {
  /// A commit: checks, the caller's closure, validation, append.
  case commit(CommitWork)
  /// A write that appends no commit (a consumer's position, a projection's batch), run in
  /// the batch's transaction like a commit, always in a nested transaction of its own.
  case side(@Sendable (WriteHandle) throws -> Void)
}

struct CommitWork: Sendable {
  var expectations: [Expectation]
  var metadata: CommitMetadata
  var body: @Sendable (Transaction) throws -> any Sendable
}

/// What the writer reports for one request.
enum WriteOutcome: Sendable {
  case committed(CommitInfo?, value: any Sendable)
  case duplicate(CommitInfo)
  case done
}

/// A request waiting for, or being served by, the writer thread.
final class WriteRequest: @unchecked Sendable {
  // SAFETY (@unchecked Sendable): `stage` and `continuation` are read and written only
  // under the queue's lock; `work` is immutable.
  enum Stage {
    /// Made, not yet in the queue.
    case created
    /// In the queue: a cancellation removes it.
    case queued
    /// Taken by the writer: it completes, cancelled or not.
    case begun
    /// Its caller has been resumed.
    case finished
  }
  let work: WriteWork
  fileprivate var stage = Stage.created
  fileprivate var continuation: CheckedContinuation<WriteOutcome, any Error>?

  init(_ work: WriteWork) { self.work = work }
}

/// The requests waiting for the writer thread, in arrival order.
///
/// Cancellation is decided here, under one lock: a request still queued is removed and its
/// caller gets `CancellationError`; one the writer has taken (``takeFirst(max:)``,
/// ``takeMore(max:until:)``) runs to the end, and its caller learns the outcome.
final class WriteQueue: @unchecked Sendable {
  // SAFETY (@unchecked Sendable): every variable is read and written under `condition`.
  private let condition = NSCondition()
  private var pending: [WriteRequest] = []
  private var head = 0
  private var closed = false
  /// How many callers have been committing at once lately: the largest recent batch,
  /// fading by an eighth a batch when batches get smaller.
  private var peak = 0

  /// Queues `request` and suspends until the writer (or a cancellation) resumes it.
  func submit(_ request: WriteRequest, path: String) async throws -> WriteOutcome {
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (c: CheckedContinuation<WriteOutcome, any Error>) in
        condition.lock()
        // The task's cancelled flag is set before its handlers run, so either this sees it
        // or `cancel` below finds the request queued.
        if Task.isCancelled {
          request.stage = .finished
          condition.unlock()
          c.resume(throwing: CancellationError())
          return
        }
        if closed {
          request.stage = .finished
          condition.unlock()
          c.resume(throwing: ServiceError.storeClosed(path: path))
          return
        }
        request.continuation = c
        request.stage = .queued
        pending.append(request)
        condition.signal()
        condition.unlock()
      }
    } onCancel: {
      cancel(request)
    }
  }

  /// Removes a queued request, resuming its caller with `CancellationError`.
  private func cancel(_ request: WriteRequest) {
    condition.lock()
    guard request.stage == .queued, let c = request.continuation else {
      condition.unlock()
      return
    }
    request.stage = .finished  // left in `pending`; the writer skips it
    request.continuation = nil
    condition.unlock()
    c.resume(throwing: CancellationError())
  }

  /// Waits for a request and takes what is queued, up to `max`: the start of a batch.
  ///
  /// The requests taken are marked begun. `nil` once the queue is closed and empty.
  func takeFirst(max: Int) -> [WriteRequest]? {
    condition.lock()
    defer { condition.unlock() }
    while true {
      let batch = takeQueuedLocked(max: max)
      if !batch.isEmpty { return batch }
      if closed { return nil }
      condition.wait()
    }
  }

  /// Takes up to `max` more requests for the batch under way, waiting until `deadline` for
  /// one when none is queued; empty once the deadline has passed (or the queue is closed)
  /// with nothing queued.
  func takeMore(max: Int, until deadline: Date) -> [WriteRequest] {
    condition.lock()
    defer { condition.unlock() }
    while true {
      let more = takeQueuedLocked(max: max)
      if !more.isEmpty || closed { return more }
      if !condition.wait(until: deadline) { return takeQueuedLocked(max: max) }
    }
  }

  /// Takes up to `max` of the requests queued now, without waiting (possibly none).
  func takeQueued(max: Int) -> [WriteRequest] {
    condition.lock()
    defer { condition.unlock() }
    return takeQueuedLocked(max: max)
  }

  /// How many requests a batch should wait for (see ``StoreService/serve(startingWith:)``):
  /// how many callers have lately been committing at once, at most `max`.
  func expectedBatch(max: Int) -> Int {
    condition.lock()
    defer { condition.unlock() }
    return Swift.min(max, peak)
  }

  /// Records the size of a batch just committed: the largest recent batch sets `peak`,
  /// which fades by an eighth a batch when batches get smaller.
  func batchEnded(size: Int) {
    condition.lock()
    peak = Swift.max(size, peak - (peak + 7) / 8)
    condition.unlock()
  }

  /// The queued requests, up to `max`, marked begun (cancelled ones skipped).
  ///
  /// Called with the lock held.
  private func takeQueuedLocked(max: Int) -> [WriteRequest] {
    var taken: [WriteRequest] = []
    while head < pending.count && taken.count < max {
      let r = pending[head]
      head += 1
      if r.stage == .queued {
        r.stage = .begun
        taken.append(r)
      }
    }
    if head == pending.count {
      pending.removeAll(keepingCapacity: true)
      head = 0
    }
    return taken
  }

  /// How many requests wait to be taken (for tests that arrange a batch).
  var waiting: Int {
    condition.lock()
    defer { condition.unlock() }
    return pending[head...].count { $0.stage == .queued }
  }

  /// Puts begun requests back at the front (a batch that had to stop early).
  func putBack(_ requests: [WriteRequest]) {
    condition.lock()
    for r in requests { r.stage = .queued }
    pending.replaceSubrange(head..<head, with: requests)
    condition.signal()
    condition.unlock()
  }

  /// Resumes a begun request's caller with its outcome.
  func finish(_ request: WriteRequest, _ result: Result<WriteOutcome, any Error>) {
    condition.lock()
    let c = request.continuation
    request.continuation = nil
    request.stage = .finished
    condition.unlock()
    c?.resume(with: result)
  }

  /// Takes no more requests; the writer drains what is queued, then stops.
  func close() {
    condition.lock()
    closed = true
    condition.broadcast()
    condition.unlock()
  }
}
