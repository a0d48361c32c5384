import EventGraphLocking
import Foundation
internal import LMDB

// Consumer groups (Docs/services.md, "Consumer groups"): members of a group share its
// commits, each commit handled by one member, one object's commits in order.
//
// A group has a fixed number of partitions; an object belongs to partition `id % count`, a
// commit to the partitions of the objects it touches and is handled by the member holding
// the lowest of them (its owner). Each partition keeps, in the store, a position (every
// commit of the partition up to it is dealt with) and a lease (a member and when it lapses,
// by the wall clock every process on the machine shares). A member goes through the log
// from each of its partitions' positions: a commit it owns waits until its other partitions
// have reached it (their earlier commits are done), then is handled; a commit another
// partition owns waits until that partition has passed it. Waits point back in the log, so
// they end. Positions move only under the member's lease, in the write that acknowledges:
// a member that lost a partition cannot acknowledge for it, and the next holder starts where
// the last acknowledgement left it (a commit handled but not acknowledged is handled again).

/// How a member of a consumer group works (``EventStore/consumerGroup(_:member:options:)``).
public struct GroupOptions: Sendable, Hashable {
  /// How long a partition stays a member's without renewal, in seconds (0.05 to 3,600).
  ///
  /// A member renews its leases while it works, but not past one lease into a single attempt
  /// at a commit: a handler that never returns loses its partitions to the other members.
  public var lease: Double
  /// The group's partitions (1 to 1,024), fixed by the first member that joins.
  public var partitions: Int
  /// Attempts at a commit before it is parked (1 to 100).
  public var maxAttempts: Int
  /// The wait before the first retry, in seconds, doubling each time, at most a quarter of
  /// the lease (0 to 60).
  public var backoff: Double
  /// When a partition's position lies before the base of a truncated log, whether it goes
  /// on from the base (a commit holding the objects as they were at the cut, which touches
  /// every partition); by default the member's run throws ``ErrorCode/historyTruncated``,
  /// as a ``Consumer`` does (Docs/retention.md).
  public var fromBase: Bool

  public init(
    lease: Double = 10, partitions: Int = 16, maxAttempts: Int = 5, backoff: Double = 0.05, fromBase: Bool = false
  ) {
    self.lease = lease
    self.partitions = partitions
    self.maxAttempts = maxAttempts
    self.backoff = backoff
    self.fromBase = fromBase
  }

  /// The refusal of options out of range, naming the group.
  func check(group: String) throws {
    func refuse(_ detail: String) -> ServiceError { ServiceError.invalidGroup(group, detail) }
    guard lease.isFinite, lease >= 0.05, lease <= 3_600 else {
      throw refuse("a lease of \(lease) seconds is out of range (0.05 to 3600)")
    }
    guard (1...1_024).contains(partitions) else {
      throw refuse("\(partitions) partitions are out of range (1 to 1024)")
    }
    guard (1...100).contains(maxAttempts) else {
      throw refuse("\(maxAttempts) attempts are out of range (1 to 100)")
    }
    guard backoff.isFinite, backoff >= 0, backoff <= 60 else {
      throw refuse("a backoff of \(backoff) seconds is out of range (0 to 60)")
    }
  }
}

/// A commit a group gave up on after its attempts, kept with the last error.
public struct ParkedCommit: Sendable, Hashable {
  /// The commit's first sequence: what `retry` and `skip` name it by.
  public var sequence: UInt64
  public var lastSequence: UInt64
  public var number: UInt64
  /// The partition that owns it.
  public var partition: Int
  public var attempts: Int
  /// The last attempt's error, as text.
  public var error: String
  public var parkedAt: Date
  /// Whether it is to be tried again (``EventStore/retryParked(group:sequence:)``).
  public var retry: Bool
}

/// A partition of a group as the store holds it.
public struct GroupPartition: Sendable, Hashable {
  public var index: Int
  /// Every commit of the partition up to this sequence is dealt with.
  public var position: UInt64
  /// The member holding it, and until when; `nil` when none does or the lease lapsed.
  public var holder: String?
  public var expires: Date?
}

/// A group's state: ``EventStore/consumerGroups()``.
public struct GroupStatus: Sendable, Hashable {
  public var name: String
  public var partitions: [GroupPartition]
  /// The members whose heartbeat has not lapsed, and until when it holds.
  public var members: [String: Date]
  public var parked: [ParkedCommit]
  /// The log's last sequence less the lowest partition's position.
  public var lag: UInt64
}

/// One member of a consumer group: ``EventStore/consumerGroup(_:member:options:)``.
///
/// ```swift
/// let mailer = try store.consumerGroup("send-email", member: hostname, options: GroupOptions(lease: 10))
/// try await mailer.run { commit in try await sendMails(for: commit) }
/// ```
///
/// Delivery is at least once, as for a ``Consumer``: a commit is acknowledged once its
/// handler returned, in one write with the partition's position; one handled but not yet
/// acknowledged when its member dies is handled again by the next. One object's commits
/// are handled in their order. A handler that throws is tried again after a backoff; after
/// ``GroupOptions/maxAttempts`` the commit is **parked** (``ParkedCommit``) and the group
/// moves on.
public final class ConsumerGroup: Sendable {
  public let name: String
  public let member: String
  public let options: GroupOptions
  let store: EventStore
  let db: Database
  private let owned = Locked<Set<Int>>([])
  /// When the current attempt at a commit began (monotonic seconds), while one runs.
  private let busySince = Locked<Double?>(nil)

  init(name: String, member: String, options: GroupOptions, store: EventStore, db: Database) {
    self.name = name
    self.member = member
    self.options = options
    self.store = store
    self.db = db
  }

  /// The partitions this member holds now.
  public var partitions: Set<Int> { owned.withLock { $0 } }

  /// Handles the group's commits with `body` as they come, until cancelled: joins, takes
  /// its share of the partitions, and gives them back when it ends.
  ///
  /// - Throws: `CancellationError` when the task is cancelled; the store's errors. A
  ///   handler's errors are retried, then park their commit; they do not end the run.
  public func run(_ body: @escaping @Sendable (Commit) async throws -> Void) async throws {
    try await join()
    let renewer = Task { [self] in
      while !Task.isCancelled {
        try? await Task.sleep(for: .seconds(options.lease / 4))
        try? await renew()
      }
    }
    defer { renewer.cancel() }
    do {
      var rebalanced = -Double.infinity
      while true {
        try Task.checkCancellation()
        let generation = store.service.notifier.generation
        // Every third of a lease, and at least every second: a member that joins gets its
        // share soon whatever the lease.
        if monotonicNow() - rebalanced >= min(options.lease / 3, 1) {
          try await rebalance()
          rebalanced = monotonicNow()
        }
        let pass = try await advance(partitions.sorted(), body)
        let retried = try await retryParked(body)
        // Waiting for another member's partition, whose position a write of its own moves
        // (no commit wakes this one): looked at again soon.
        if !pass.moved && !retried {
          try await waitForCommit(after: generation, seconds: pass.waiting ? 0.002 : min(options.lease / 3, 0.25))
        }
      }
    } catch {
      // In a task of its own: this one is cancelled, and its writes would be refused.
      await Task { [self] in try? await release() }.value
      throw error
    }
  }

  // MARK: - Leases

  /// Records the group's partition count when it has none; refuses another.
  func join() async throws {
    let (key, count) = (name, options.partitions)
    let refused = Locked<Int?>(nil)
    try await store.service.sideWrite { [db] txn in
      if let stored = try GroupKeys.partitionCount(key, db, txn) {
        if stored != count { refused.withLock { $0 = stored } }
        return
      }
      try txn.put(db, key: GroupKeys.configKey(key), value: BigEndianKey(UInt64(count)))
    }
    if let stored = refused.withLock({ $0 }) {
      throw ServiceError.invalidGroup(key, "it has \(stored) partitions, not \(count)")
    }
  }

  /// Renews the heartbeat and the leases this member holds, unless an attempt at a commit
  /// has run for a lease already.
  func renew() async throws {
    if let since = busySince.withLock({ $0 }), monotonicNow() - since >= options.lease { return }
    let (key, me, lease, mine) = (name, member, options.lease, partitions)
    try await store.service.sideWrite { [db] txn in
      let now = GroupKeys.now()
      try txn.put(db, key: GroupKeys.member(key, me), value: BigEndianKey(now + GroupKeys.ms(lease)))
      try GroupKeys.change(key, mine, heldBy: me, db, txn) { $0.expires = now + GroupKeys.ms(lease) }
    }
  }

  /// Renews, then evens the partitions out among the members alive: gives back what is
  /// above this member's share, takes free or lapsed ones up to it.
  func rebalance() async throws {
    let (key, me, options) = (name, member, options)
    let taken = Locked<Set<Int>>([])
    try await store.service.sideWrite { [db] txn in
      let now = GroupKeys.now()
      let expires = now + GroupKeys.ms(options.lease)
      try txn.put(db, key: GroupKeys.member(key, me), value: BigEndianKey(expires))
      var alive = 0
      let members = Array(GroupKeys.memberPrefix(key).utf8)
      try txn.forEach(db, from: members) { k, v in
        guard k.starts(with: members) else { return false }
        if (BigEndianKey.decode(v) ?? 0) > now { alive += 1 }
        return true
      }
      let share = (options.partitions + max(alive, 1) - 1) / max(alive, 1)
      var records: [GroupKeys.Partition] = []
      for p in 0..<options.partitions {
        records.append(
          try GroupKeys.partition(key, p, db, txn) ?? GroupKeys.Partition(position: 0, expires: 0, holder: ""))
      }
      let stored = records
      var mine = records.indices.filter { records[$0].holder == me }
      while mine.count > share, let extra = mine.popLast() {
        records[extra].holder = ""
        records[extra].expires = 0
      }
      for p in records.indices where mine.count < share && records[p].holder != me && records[p].expires <= now {
        records[p].holder = me
        mine.append(p)
      }
      for p in mine { records[p].expires = expires }
      // Only what changed: the partitions this member renews, gives back or takes.
      for p in records.indices where records[p] != stored[p] {
        try txn.put(db, key: GroupKeys.partitionKey(key, p), value: records[p].bytes)
      }
      taken.withLock { $0 = Set(mine) }
    }
    owned.withLock { $0 = taken.withLock { $0 } }
  }

  /// Gives back every partition this member holds, and its heartbeat.
  func release() async throws {
    let (key, me, mine) = (name, member, partitions)
    try await store.service.sideWrite { [db] txn in
      _ = try txn.delete(db, key: GroupKeys.member(key, me))
      try GroupKeys.change(key, mine, heldBy: me, db, txn) {
        $0.holder = ""
        $0.expires = 0
      }
    }
    owned.withLock { $0 = [] }
  }

  // MARK: - Going through the log

  /// The partitions of the objects `commit` touches (partition 0 for one that touches none).
  func partitions(of commit: Commit) -> Set<Int> {
    var found = Set<Int>()
    for e in commit.events { found.insert(Int(e.object.rawValue % UInt64(options.partitions))) }
    return found.isEmpty ? [0] : found
  }

  /// Moves this member's partitions on through the log, in one pass over the commits after
  /// the lowest of their positions, as far as their waits allow; whether any moved, and
  /// whether one waits for another partition.
  private func advance(_ mine: [Int], _ body: @Sendable (Commit) async throws -> Void) async throws -> (
    moved: Bool, waiting: Bool
  ) {
    guard !mine.isEmpty else { return (false, false) }
    let (key, count) = (name, options.partitions)
    let (start, commits) = try store.readStorageHandle { txn in
      let reader = GraphReader(txn: txn, dbs: store.dbs, model: store.model)
      var positions: [Int: UInt64] = [:]
      for p in 0..<count { positions[p] = try GroupKeys.partition(key, p, db, txn)?.position ?? 0 }
      let from = mine.compactMap { positions[$0] }.min() ?? 0
      return (
        positions, try reader.commits(after: from, maxCommits: 256, maxEvents: 100_000, fromBase: options.fromBase)
      )
    }
    // Every partition's position as this pass knows it: this member's move with it, the
    // others' are as read at its start (a wait on one of them is tried again next pass).
    var reached = start
    var blocked = Set<Int>()
    var parked: [Int: [ParkedCommit]] = [:]
    for c in commits {
      let touched = partitions(of: c)
      let owner = touched.min() ?? 0
      // In ascending order: a commit's owner, when it is this member's, goes first.
      for p in mine where !blocked.contains(p) && c.lastSequence > reached[p, default: 0] {
        guard touched.contains(p) else {
          reached[p] = c.lastSequence
          continue
        }
        reached[p] = max(reached[p, default: 0], c.firstSequence - 1)
        if owner == p {
          // One object's commits in order: its other partitions must have come to it.
          guard touched.allSatisfy({ $0 == p || reached[$0, default: 0] >= c.firstSequence - 1 }) else {
            blocked.insert(p)
            continue
          }
          if let failure = try await handle(c, body) {
            parked[p, default: []].append(
              ParkedCommit(
                sequence: c.firstSequence, lastSequence: c.lastSequence, number: c.number, partition: p,
                attempts: failure.attempts, error: failure.error, parkedAt: Date(), retry: false))
          }
          reached[p] = c.lastSequence
        } else {
          guard reached[owner, default: 0] >= c.lastSequence else {
            blocked.insert(p)
            continue
          }
          reached[p] = c.lastSequence
        }
      }
    }
    let moved = mine.filter { reached[$0, default: 0] > start[$0, default: 0] }
    guard !moved.isEmpty else { return (false, !blocked.isEmpty) }
    return (try await acknowledge(moved.map { ($0, reached[$0, default: 0]) }, parking: parked), !blocked.isEmpty)
  }

  /// One commit through `body`, tried up to the options' attempts; the last failure when
  /// every attempt failed.
  private func handle(_ c: Commit, _ body: @Sendable (Commit) async throws -> Void) async throws -> (
    attempts: Int, error: String
  )? {
    var delay = options.backoff
    for attempt in 1...options.maxAttempts {
      busySince.withLock { $0 = monotonicNow() }
      defer { busySince.withLock { $0 = nil } }
      do {
        try await body(c)
        return nil
      } catch is CancellationError {
        throw CancellationError()
      } catch {
        if attempt == options.maxAttempts { return (attempt, "\(error)") }
      }
      try await Task.sleep(for: .seconds(delay))
      delay = min(delay * 2, options.lease / 4)
    }
    return nil
  }

  /// Moves each partition's position to its sequence and parks its commits, in one write,
  /// for the partitions whose lease this member still holds; whether any moved (a lost
  /// lease drops its partition).
  private func acknowledge(_ moves: [(Int, UInt64)], parking parked: [Int: [ParkedCommit]]) async throws -> Bool {
    let (key, me) = (name, member)
    let lost = Locked<Set<Int>>([])
    try await store.service.sideWrite { [db] txn in
      let now = GroupKeys.now()
      for (p, sequence) in moves {
        guard var record = try GroupKeys.partition(key, p, db, txn), record.holder == me, record.expires > now else {
          _ = lost.withLock { $0.insert(p) }
          continue
        }
        record.position = max(record.position, sequence)
        try txn.put(db, key: GroupKeys.partitionKey(key, p), value: record.bytes)
        for c in parked[p] ?? [] {
          try txn.put(db, key: GroupKeys.parkedKey(key, c.sequence), value: GroupKeys.encode(c))
        }
      }
    }
    let gone = lost.withLock { $0 }
    owned.withLock { $0.subtract(gone) }
    return gone.count < moves.count
  }

  /// Tries again the parked commits marked for it in this member's partitions; whether any ran.
  private func retryParked(_ body: @Sendable (Commit) async throws -> Void) async throws -> Bool {
    let mine = partitions
    let due = try store.parkedCommits(group: name).filter { $0.retry && mine.contains($0.partition) }
    for var p in due {
      let commit = try store.readStorageHandle { txn in
        try GraphReader(txn: txn, dbs: store.dbs, model: store.model).commits(after: p.sequence - 1, maxCommits: 1)
          .first
      }
      let (key, sequence) = (name, p.sequence)
      guard let commit, commit.firstSequence == sequence else {
        throw StoreError.corrupt("group '\(key)' parked a commit at sequence \(sequence), which the log does not hold")
      }
      if let failure = try await handle(commit, body) {
        p.attempts += failure.attempts
        p.error = failure.error
        p.retry = false
        p.parkedAt = Date()
        let parked = p
        try await store.service.sideWrite { [db] txn in
          try txn.put(db, key: GroupKeys.parkedKey(key, sequence), value: GroupKeys.encode(parked))
        }
      } else {
        try await store.service.sideWrite { [db] txn in _ = try txn.delete(db, key: GroupKeys.parkedKey(key, sequence))
        }
      }
    }
    return !due.isEmpty
  }

  /// Waits for a commit past `generation`, or `seconds`, whichever comes first.
  private func waitForCommit(after generation: UInt64, seconds: Double) async throws {
    let notifier = store.service.notifier
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask { try await notifier.wait(after: generation) }
      group.addTask { try await Task.sleep(for: .seconds(seconds)) }
      _ = try await group.next()
      group.cancelAll()
    }
  }
}

/// Seconds of the monotonic clock.
private func monotonicNow() -> Double {
  var t = timespec()
  clock_gettime(CLOCK_MONOTONIC, &t)
  return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9
}
