import Foundation
import LMDB
import Synchronization

/// The store's one writer thread: it drains the ``WriteQueue`` in batches, one LMDB write
/// transaction (and so one fsync) per batch, so that a refused request is rolled back alone
/// (see ``StoreService/Speculation``).
///
/// A thread, not a task: an LMDB write transaction belongs to the thread that began it, and
/// nothing here ever suspends while one is open.
final class WriterThread: Sendable {
  private let finished = DispatchSemaphore(value: 0)
  private let id = Mutex<pthread_t?>(nil)

  /// Starts the thread, which serves `service` until its queue is closed and drained.
  init(serving service: StoreService) {
    start(service)
  }

  private func start(_ service: StoreService) {
    let thread = Thread { [self] in
      id.withLock { $0 = pthread_self() }
      service.serveUntilClosed()
      finished.signal()
    }
    thread.name = "EventGraph writer"
    thread.start()
  }

  /// Whether the caller runs on this writer thread.
  var isCurrent: Bool {
    id.withLock { $0.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
  }

  /// Waits until the thread has ended (its queue must be closed first).
  func join() { finished.wait() }
}

extension StoreService {
  /// Requests per batch at most; more wait for the next batch.
  static let maxBatch = 1024
  /// How long a batch smaller than the recent ones waits for the rest (see ``serve(startingWith:)``).
  static let linger = 0.000_2

  func serveUntilClosed() {
    var speculation = Speculation()
    while let first = queue.takeFirst(max: Self.maxBatch) { serve(startingWith: first, speculation: &speculation) }
  }

  /// Whether the next batch runs its commits straight in the batch's transaction.
  ///
  /// A refused commit must leave nothing behind while the others of its batch land. Run in
  /// a nested transaction each, it is rolled back alone; but a nested transaction costs
  /// LMDB a begin and copies of the pages it changes, on the writer's path: 64 durable
  /// committers make about a fifth more commits a second without (Docs/benchmarks.md,
  /// service section). So a batch first runs its commits straight in its own transaction,
  /// speculating that none is refused. When one is, after it may have
  /// written, the whole transaction is dropped and the batch runs again with a nested
  /// transaction each, as do the next ``nestedAfterRefusal`` batches, so that a stream of
  /// refusals does not run every batch twice. Refusals found before a commit writes (an
  /// expectation that does not hold, a repeated idempotency key, a closure that throws
  /// before it changes anything) cost nothing of this.
  struct Speculation {
    /// Batches run nested after one whose speculation failed.
    static let nestedAfterRefusal = 16
    private(set) var nestedBatchesLeft = 0
    var runsStraight: Bool { nestedBatchesLeft == 0 }

    /// A batch has ended; `failed` when a commit it ran straight was refused after it may
    /// have written (the batch then ran again, nested).
    mutating func batchEnded(failed: Bool) {
      nestedBatchesLeft = failed ? Self.nestedAfterRefusal : max(0, nestedBatchesLeft - 1)
    }
  }

  /// A commit run straight in the batch's transaction was refused after it may have written:
  /// the transaction is dropped and the batch runs again, nested.
  private struct SpeculationFailed: Error {}

  /// Runs one batch in one write transaction, then resumes every caller with its outcome.
  ///
  /// The batch starts with what is queued and runs each request as soon as it is taken.
  /// While it holds fewer requests than callers have lately been committing at once, it
  /// takes the ones that arrive, waiting up to ``linger`` for them: the callers of the last
  /// batch are being resumed and are about to commit again, and one batch of all of them
  /// costs one fsync instead of two. (Waiting only for as many as the last batch held let
  /// 64 callers settle into two alternating batches of 32, each group committing while the
  /// other waited.) Past that number it takes, without waiting, whatever is queued when
  /// it has run what it holds: otherwise the batches could never outgrow the recent peak,
  /// and a peak set low (64 callers whose first batches held 46) stayed the batch size for
  /// good, the others waiting a turn. Running requests while the others arrive, rather than
  /// after, keeps the writer's work off the callers' way back.
  private func serve(startingWith first: [WriteRequest], speculation: inout Speculation) {
    var straight = speculation.runsStraight
    var failed = false
    defer { speculation.batchEnded(failed: failed) }
    var batch = first
    var results: [Result<WriteOutcome, any Error>] = []
    var served = batch.count
    var lastSequence: UInt64?
    // After a rerun in a bigger map the batch is what it was: it takes no more.
    var takesMore = true
    let expected = queue.expectedBatch(max: Self.maxBatch)
    var deadline: Date?
    while true {
      results.removeAll(keepingCapacity: true)
      lastSequence = nil
      do {
        try env.growIfNearlyFull()
        let txn = try env.beginWrite()
        try checkWritable(txn.handle)
        var ends = BatchEnds()
        // Commits run straight share one projector, its buffers and its caches' storage.
        let shared =
          straight ? Projector(txn: txn.handle, dbs: dbs, model: model) : nil
        var next = 0
        var full = false
        while true {
          while next < batch.count {
            do {
              let outcome = try perform(batch[next].work, in: txn.handle, ends: &ends, straight: shared)
              if case .committed(let info?, _) = outcome { lastSequence = info.lastSequence }
              results.append(.success(outcome))
            } catch let e as LMDBError where e == .mapFull {
              throw e  // the whole batch runs again in a bigger map
            } catch let e as SpeculationFailed {
              throw e  // the whole batch runs again, nested
            } catch let e as LMDBError where e == .transactionFull && next > 0 {
              full = true  // commit what fits; the rest goes back to the front of the queue
              break
            } catch {
              results.append(.failure(error))
            }
            next += 1
          }
          guard takesMore, !full, batch.count < Self.maxBatch else { break }
          let more: [WriteRequest]
          if batch.count < expected {
            let until = deadline ?? Date(timeIntervalSinceNow: Self.linger)
            deadline = until
            more = queue.takeMore(max: Self.maxBatch - batch.count, until: until)
          } else {
            // What is queued already joins without waiting, so the batch can grow past the
            // recent peak when more callers commit.
            more = queue.takeQueued(max: Self.maxBatch - batch.count)
          }
          if more.isEmpty { break }
          batch += more
        }
        served = next
        try txn.commit()
        countBatch()
        break
      } catch is SpeculationFailed {
        takesMore = false
        straight = false
        failed = true
      } catch let e as LMDBError where e == .mapFull {
        takesMore = false
        do {
          try env.grow()
        } catch {
          for r in batch { queue.finish(r, .failure(error)) }
          queue.batchEnded(size: batch.count)
          return
        }
      } catch {
        // Nothing of the batch landed: a failed check before any request ran, or a failed commit.
        for r in batch { queue.finish(r, .failure(error)) }
        queue.batchEnded(size: batch.count)
        return
      }
    }
    queue.batchEnded(size: batch.count)
    if served < batch.count { queue.putBack(Array(batch[served...])) }
    if let lastSequence { notifier.committed(lastSequence: lastSequence) }
    // Resuming a caller wakes a thread of the task pool, a system call each: leave that to
    // another thread, so the writer starts the next batch at once.
    let finished = Array(zip(batch, results))
    completions.async { [queue] in
      for (r, result) in finished { queue.finish(r, result) }
    }
  }

  /// The checks every commit makes first (shared with ``EventStore/write(metadata:_:)``).
  private func checkWritable(_ txn: WriteHandle) throws {
    try dbs.checkWritable(txn, model: model, path: path)
  }

  /// What the commits of a batch so far have left for the next one to know without
  /// reading it back: the log's end and the next identity (both unknown at first).
  struct BatchEnds {
    var log: (commit: UInt64, sequence: UInt64)?
    var nextObject: UInt64?
  }

  /// Runs one request inside the batch's transaction `txn`; `ends` moves on only when a
  /// commit lands.
  ///
  /// A commit runs in a nested transaction, rolled back alone when it is refused, unless
  /// given `straight`, the batch's projector: then it writes into `txn` itself, through that
  /// projector, and a refusal after it may have written throws ``SpeculationFailed`` (see
  /// ``Speculation``).
  private func perform(_ work: WriteWork, in txn: WriteHandle, ends: inout BatchEnds, straight: Projector?) throws
    -> WriteOutcome
  {
    switch work {
    case .side(let body):
      try txn.nested { child in try body(child.handle) }
      return .done
    case .commit(let w):
      let reader = GraphReader(txn: txn, dbs: dbs, model: model)
      if let key = w.metadata.idempotencyKey,
        let first = try txn.withValue(dbs.dedupe, key: key, { BigEndianKey.decode($0) }) ?? nil
      {
        guard let info = try reader.commitInfo(at: first) else {
          throw StoreError.corrupt("idempotency key '\(key)' points at sequence \(first), where no commit starts")
        }
        return .duplicate(info)
      }
      for e in w.expectations { try check(e, reader) }
      let before = ends
      var after = ends
      func run(_ handle: WriteHandle, _ projector: Projector?, wrote: inout Bool) throws -> WriteOutcome {
        let tx =
          projector.map { Transaction(model: model, projector: $0, metadata: w.metadata) }
          ?? Transaction(model: model, dbs: dbs, handle: handle, metadata: w.metadata)
        defer {
          wrote = tx.hasWritten
          tx.close()
        }
        tx.knownLogEnd = before.log
        tx.nextObject = before.nextObject
        let value = try w.body(tx)
        try refuseKeySetInside(tx, given: w.metadata, in: handle)  // refused alone, as a commit that throws
        let info = try tx.finish()
        if let info { try projections.applyInline(after: info, of: tx, in: handle) }
        if let info { after.log = (info.number, info.lastSequence) }
        after.nextObject = tx.nextObject
        return .committed(info, value: value)
      }
      let outcome: WriteOutcome
      var wrote = false
      if let straight {
        do {
          outcome = try run(txn, straight, wrote: &wrote)
        } catch let e as LMDBError where e == .mapFull {
          throw e  // the batch runs again in a bigger map, straight still
        } catch let e where !wrote && !(e is LMDBError) {
          throw e  // refused before it wrote anything (its closure threw first): alone already
        } catch {
          throw SpeculationFailed()
        }
      } else {
        outcome = try txn.nested { child in try run(child.handle, nil, wrote: &wrote) }
      }
      ends = after  // the commit landed
      return outcome
    }
  }

  private func check(_ e: Expectation, _ reader: GraphReader<WriteHandle>) throws {
    switch e {
    case .logEnd(let expected):
      let actual = try reader.logEnd().sequence
      guard actual == expected else { throw ConflictError(subject: .log, expected: expected, actual: actual) }
    case .object(let o, let expected):
      let actual = try reader.version(of: o)
      guard actual == expected else {
        throw ConflictError(subject: .object(o, name: reader.display(o)), expected: expected, actual: actual)
      }
    }
  }
}
