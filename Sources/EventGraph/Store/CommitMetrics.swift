import EventGraphLocking
import Foundation

/// What the store's commit writer measures of its own write transactions in this process.
///
/// How long each takes, how long LMDB's commit (its page writes and flush) takes, and how
/// many commits and events each holds; read as ``StoreMetrics``.
///
/// One lock per write transaction, taken after it is committed: next to an LMDB commit
/// (tens of microseconds without a flush, milliseconds with one) its cost is a rounding.
final class CommitMetrics: Sendable {
  /// The upper bounds of the duration buckets, in seconds: from 50 µs (a batch that does
  /// not flush) to 10 s (a disk in trouble).
  static let durationBounds: [Double] = [
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
  ]
  /// The upper bounds of the commits-per-transaction buckets (group commit's batch sizes).
  static let batchBounds: [Double] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096]

  private struct State {
    var transaction = Counts(bounds: CommitMetrics.durationBounds)
    var lmdbCommit = Counts(bounds: CommitMetrics.durationBounds)
    var batch = Counts(bounds: CommitMetrics.batchBounds)
    var commits: UInt64 = 0
    var events: UInt64 = 0
  }

  /// A histogram being counted: a count per bucket (not cumulative), the sum and the count.
  struct Counts {
    let bounds: [Double]
    var buckets: [UInt64]
    var sum = 0.0
    var count: UInt64 = 0

    init(bounds: [Double]) {
      self.bounds = bounds
      buckets = [UInt64](repeating: 0, count: bounds.count + 1)
    }

    mutating func observe(_ value: Double) {
      // The first bound at or above the value: a binary search of the sorted bounds.
      var low = 0
      var high = bounds.count
      while low < high {
        let mid = (low + high) / 2
        if value > bounds[mid] { low = mid + 1 } else { high = mid }
      }
      buckets[low] += 1
      sum += value
      count += 1
    }

    var histogram: StoreMetrics.Histogram {
      var cumulative: [UInt64] = []
      var running: UInt64 = 0
      for b in buckets.dropLast() {
        running += b
        cumulative.append(running)
      }
      return StoreMetrics.Histogram(upperBounds: bounds, cumulativeCounts: cumulative, count: count, sum: sum)
    }
  }

  private let state = Locked(State())

  /// The monotonic clock in nanoseconds: two of them apart are a duration.
  static func now() -> UInt64 {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return UInt64(t.tv_sec) &* 1_000_000_000 &+ UInt64(t.tv_nsec)
  }

  /// Counts one committed write transaction that appended `commits` commits of `events`
  /// events, `total` nanoseconds from its start, `lmdbCommit` of them in LMDB's commit.
  func record(total: UInt64, lmdbCommit: UInt64, commits: Int, events: Int) {
    state.withLock { s in
      s.transaction.observe(Double(total) / 1e9)
      s.lmdbCommit.observe(Double(lmdbCommit) / 1e9)
      s.batch.observe(Double(commits))
      s.commits += UInt64(commits)
      s.events += UInt64(events)
    }
  }

  /// The histograms and counters so far.
  func read() -> (
    transaction: StoreMetrics.Histogram, lmdbCommit: StoreMetrics.Histogram, batch: StoreMetrics.Histogram,
    commits: UInt64, events: UInt64
  ) {
    state.withLock { s in (s.transaction.histogram, s.lmdbCommit.histogram, s.batch.histogram, s.commits, s.events) }
  }
}
