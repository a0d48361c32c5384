import EventGraphLocking
import Foundation
internal import LMDB

/// The store's one writer thread: it drains the ``WriteQueue`` in batches, one LMDB write
/// transaction (and so one fsync) per batch, so that a refused request is rolled back alone
/// (see ``StoreService/Speculation``).
///
/// A thread, not a task: an LMDB write transaction belongs to the thread that began it, and
/// nothing here ever suspends while one is open.
final class WriterThread: Sendable {
  private let finished = DispatchSemaphore(value: 0)
  private let id = Locked<pthread_t?>(nil)

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
    let expected = queue.expectedBatch(max: Self.maxBatch)
    var deadline: Date?
    while true {
      do {
        try commits.run { txn, reruns in
          results.removeAll(keepingCapacity: true)
          // Run again (in a bigger map, or nested), the batch is what it was: it takes no more.
          let takesMore = reruns == 0 && !failed
          try txn.checkWritable()
          var next = 0
          var full = false
          while true {
            while next < batch.count {
              do {
                results.append(.success(try perform(batch[next].work, in: txn, straight: straight)))
              } catch let e as LMDBError where e == .mapFull {
                throw e  // the whole batch runs again in a bigger map
              } catch let e as SpeculationFailed {
                throw e  // the whole batch runs again, nested
              } catch let e as LMDBError where e == .transactionFull && next > 0 {
                full = true  // commit what fits; the rest goes back to the front of the queue
                break
              } catch let e as LMDBError {
                results.append(.failure(StoreError.reporting(e, path: path)))
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
        }
        countBatch()
        break
      } catch is SpeculationFailed {
        straight = false
        failed = true
      } catch {
        // Nothing of the batch landed: a failed check before any request ran, a failed
        // commit, or a map that could not grow.
        for r in batch { queue.finish(r, .failure(error)) }
        queue.batchEnded(size: batch.count)
        return
      }
    }
    queue.batchEnded(size: batch.count)
    if served < batch.count { queue.putBack(Array(batch[served...])) }
    // Resuming a caller wakes a thread of the task pool, a system call each: leave that to
    // another thread, so the writer starts the next batch at once.
    let finished = Array(zip(batch, results))
    completions.async { [queue] in
      for (r, result) in finished { queue.finish(r, result) }
    }
  }

  /// Runs one request inside the batch's transaction; the batch's log end and next
  /// identity move on only when a commit lands.
  ///
  /// A commit runs in a nested transaction, rolled back alone when it is refused, unless
  /// `straight`: then it writes into the batch's transaction itself, sharing the batch's
  /// projector buffers, and a refusal after it may have written throws ``SpeculationFailed``
  /// (see ``Speculation``).
  private func perform(_ work: WriteWork, in batch: CommitBatch, straight: Bool) throws -> WriteOutcome {
    switch work {
    case .side(let body):
      try batch.handle.nested { try body(batch.handle) }
      return .done
    case .commit(let w):
      if let key = w.metadata.idempotencyKey, let first = try batch.firstCommit(withKey: key) {
        return .duplicate(first)
      }
      let reader = batch.reader
      for e in w.expectations { try reader.check(e) }
      func run(_ b: CommitBatch, wrote: inout Bool) throws -> WriteOutcome {
        let tx = b.transaction(metadata: w.metadata, sharingBuffers: straight)
        defer {
          wrote = tx.hasWritten
          tx.close()
        }
        do {
          let value = try w.body(tx)
          return .committed(try b.commit(tx), value: value)
        } catch {
          throw tx.namingInserted(error)
        }
      }
      var wrote = false
      guard straight else { return try batch.nested { inner in try run(inner, wrote: &wrote) } }
      do {
        return try run(batch, wrote: &wrote)
      } catch let e as LMDBError where e == .mapFull {
        throw e  // the batch runs again in a bigger map, straight still
      } catch let e where !wrote && !(e is LMDBError) {
        throw e  // refused before it wrote anything (its closure threw first): alone already
      } catch {
        throw SpeculationFailed()
      }
    }
  }
}
