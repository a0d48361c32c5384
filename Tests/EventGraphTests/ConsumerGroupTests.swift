import EventGraphLocking
import Foundation
import TestSupport
import Testing

@testable import EventGraph

/// Consumer groups (Docs/services.md, "Consumer groups"): members share a group's commits,
/// each handled once, one object's commits in order, failures parked.
@Suite("Consumer groups")
struct ConsumerGroupTests {
  static func model() throws -> Model {
    try Model(
      name: "Groups", version: 1,
      entities: [
        EntityDescription(
          name: "Account",
          attributes: [
            AttributeDescription(name: "balance", type: .int64),
            AttributeDescription(name: "note", type: .string, isOptional: true),
          ])
      ])
  }

  /// What the handlers saw, in the order they saw it.
  final class Journal: Sendable {
    struct Entry: Sendable {
      let member: String
      let sequence: UInt64
      let objects: [ObjectID]
    }
    let entries = Locked<[Entry]>([])

    func record(_ member: String, _ c: Commit) {
      let objects = Array(Set(c.events.map(\.object))).sorted()
      entries.withLock { $0.append(Entry(member: member, sequence: c.firstSequence, objects: objects)) }
    }

    /// Each object's commits in the order they were handled, which must be the log's.
    func checkOrder() {
      var last: [ObjectID: UInt64] = [:]
      for e in entries.withLock({ $0 }) {
        for o in e.objects {
          #expect((last[o] ?? 0) < e.sequence, "\(o) handled at \(e.sequence) after \(last[o] ?? 0)")
          last[o] = e.sequence
        }
      }
    }
  }

  /// `count` commits on `store`, each setting one or two of `accounts` (a few also a note).
  static func commits(_ count: Int, _ store: EventStore, _ accounts: [ObjectID], seed: UInt64) throws {
    var rng = SeededGenerator(seed: seed)
    for i in 0..<count {
      let a = accounts[Int(rng.next() % UInt64(accounts.count))]
      let b = accounts[Int(rng.next() % UInt64(accounts.count))]
      let two = rng.next() % 3 == 0
      try store.write { tx in
        try tx.set(a, "balance", .int64(Int64(i)))
        if two { try tx.set(b, "balance", .int64(Int64(-i))) }
      }
    }
  }

  /// Waits, up to a generous bound that only turns a hang into a failure, until `done`.
  static func eventually(_ what: String, _ done: () throws -> Bool) async throws {
    for _ in 0..<6_000 {
      if try done() { return }
      try await Task.sleep(for: .milliseconds(10))
    }
    Issue.record("not within 60 s: \(what)")
  }

  static func setUp(_ dir: String, accounts: Int = 24) throws -> (EventStore, [ObjectID]) {
    // Relaxed: the group's guarantees do not rest on fsync, and the suite runs faster.
    let store = try EventStore.create(at: dir + "/s", model: try model(), options: StoreOptions(durability: .relaxed))
    let ids = try #require(
      try store.write { tx in
        try (0..<accounts).map { _ in try tx.insert("Account", ["balance": .int64(0)]) }
      }.value)
    return (store, ids)
  }

  @Test("four members share the commits: every commit handled once, each object's in order, the partitions spread")
  func shared() async throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let (store, accounts) = try Self.setUp(dir)
    let journal = Journal()
    // A lease no member lets lapse however loaded the machine, so that every commit is
    // handled once (a lapse would hand an unacknowledged one to another member: at least
    // once, not exactly) and the shares stay as evened out (at least every second).
    let options = GroupOptions(lease: 600, partitions: 8)
    let members = try (0..<4).map { try store.consumerGroup("ledger", member: "m\($0)", options: options) }
    let tasks = members.map { m in Task { try await m.run { c in journal.record(m.member, c) } } }
    // The members even the partitions out among themselves as they see each other.
    try await Self.eventually("each member holds its share, two partitions") {
      members.allSatisfy { $0.partitions.count == 2 }
    }
    try Self.commits(400, store, accounts, seed: 1)
    let end = try store.lastSequence()
    try await Self.eventually("the group reaches the log's end") {
      try store.consumerGroups().first?.partitions.allSatisfy { $0.position >= end } == true
    }
    let status = try #require(try store.consumerGroups().first)
    #expect(status.name == "ledger" && status.lag == 0 && status.parked.isEmpty)
    // Shared: no partition without a holder, no member with more than its share.
    #expect(status.partitions.allSatisfy { $0.holder != nil })
    let holders = Dictionary(grouping: status.partitions.compactMap(\.holder)) { $0 }.mapValues(\.count)
    #expect(holders.values.allSatisfy { $0 <= 2 }, "\(holders)")
    for t in tasks { t.cancel() }
    for t in tasks { _ = await t.result }
    let handled = journal.entries.withLock { $0.map(\.sequence) }
    let expected = try store.read { s in
      try s.reader.commits(after: 0, maxCommits: 10_000).map(\.firstSequence)
    }
    #expect(handled.sorted() == expected, "every commit once")
    #expect(Set(journal.entries.withLock { $0.map(\.member) }).count > 1, "more than one member handled commits")
    journal.checkOrder()
    // Cancelled members gave their partitions back.
    #expect(try store.consumerGroups().first?.partitions.allSatisfy { $0.holder == nil } == true)
  }

  @Test("a member that leaves or hangs loses its partitions to the others, and nothing acknowledged is lost")
  func takeover() async throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let (store, accounts) = try Self.setUp(dir)
    let journal = Journal()
    let options = GroupOptions(lease: 0.3, partitions: 4)
    let hanging = try store.consumerGroup("g", member: "hangs", options: options)
    let steady = try store.consumerGroup("g", member: "steady", options: options)
    let hangs = Task {
      try await hanging.run { c in
        // Records, then never returns: its commit is not acknowledged.
        journal.record("hangs", c)
        while true { try await Task.sleep(for: .seconds(3_600)) }
      }
    }
    try Self.commits(60, store, accounts, seed: 2)
    let runs = Task { try await steady.run { c in journal.record("steady", c) } }
    let end = try store.lastSequence()
    try await Self.eventually("the steady member takes over the hanging one's partitions") {
      try store.consumerGroups().first?.partitions.allSatisfy { $0.position >= end } == true
    }
    // The hanging member holds nothing (the steady one may let a lease lapse on a loaded
    // machine and take it back: who holds a partition at this moment is not the point).
    #expect(try store.consumerGroups().first?.partitions.allSatisfy { $0.holder != "hangs" } == true)
    hangs.cancel()
    runs.cancel()
    _ = await hangs.result
    _ = await runs.result
    let steadySaw = Set(journal.entries.withLock { $0.filter { $0.member == "steady" }.map(\.sequence) })
    let all = try store.read { s in try s.reader.commits(after: 0, maxCommits: 10_000).map(\.firstSequence) }
    // Every commit the hanging member did not finish, the steady one handled.
    let hungOn = Set(journal.entries.withLock { $0.filter { $0.member == "hangs" }.map(\.sequence) })
    // The hanging member acknowledged nothing: the steady one handled every commit, the
    // one hung on included.
    #expect(steadySaw == Set(all))
    #expect(!hungOn.isEmpty && hungOn.isSubset(of: steadySaw), "a commit hung on is handled again by the next holder")
  }

  @Test("a handler that throws is retried, then its commit parked while the rest flow; retry and skip")
  func parking() async throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let (store, accounts) = try Self.setUp(dir, accounts: 4)
    let poisoned = Locked(true)
    let attempts = Locked(0)
    let journal = Journal()
    let member = try store.consumerGroup(
      "mail", member: "only", options: GroupOptions(lease: 600, partitions: 2, maxAttempts: 3, backoff: 0.001))
    let poison = try #require(
      try store.write { tx in try tx.set(accounts[0], "note", .string("poison")) }.commit)
    try Self.commits(20, store, accounts, seed: 3)
    let runs = Task {
      try await member.run { c in
        if c.firstSequence == poison.firstSequence && poisoned.withLock({ $0 }) {
          attempts.withLock { $0 += 1 }
          throw StoreError.corrupt("poisoned")
        }
        journal.record("only", c)
      }
    }
    let end = try store.lastSequence()
    try await Self.eventually("the rest flows past the parked commit") {
      try store.consumerGroups().first?.partitions.allSatisfy { $0.position >= end } == true
    }
    let parked = try store.parkedCommits(group: "mail")
    #expect(parked.map(\.sequence) == [poison.firstSequence])
    #expect(parked.first?.attempts == 3 && attempts.withLock { $0 } == 3)
    #expect(parked.first?.error.contains("poisoned") == true)
    #expect(!journal.entries.withLock { $0.map(\.sequence) }.contains(poison.firstSequence))
    // Metrics and health say so.
    let metrics = try store.metrics()
    #expect(metrics.groups.map(\.name) == ["mail"] && metrics.groups.first?.parked == 1)
    #expect(metrics.groups.first?.members == 1 && metrics.groups.first?.lag == 0)
    let text = metrics.prometheusText(includingProcess: false)
    #expect(text.contains(#"eventgraph_group_parked_commits{group="mail"} 1"#), "\(text)")
    let checked = try MetricsTests.check(text)
    #expect(checked.status == 0, "\(checked.output)")
    let health = try store.health()
    #expect(health.problems.map(\.name) == ["group:mail"])
    #expect(health.problems.first?.detail.contains("1 parked commit") == true)
    // Retried once the cause is fixed: handled, and no longer parked.
    poisoned.withLock { $0 = false }
    try store.retryParked(group: "mail", sequence: poison.firstSequence)
    try await Self.eventually("the retried commit is handled") { try store.parkedCommits(group: "mail").isEmpty }
    #expect(journal.entries.withLock { $0.map(\.sequence) }.contains(poison.firstSequence))
    // Skipped: forgotten.
    poisoned.withLock { $0 = true }
    runs.cancel()
    _ = await runs.result
    let missing = #expect(throws: ServiceError.self) { try store.skipParked(group: "mail", sequence: 999_999) }
    #expect(missing?.code == .notParked)
  }

  @Test("a group behind a truncation's cut is refused with historyTruncated, or goes on from the base when asked")
  func behindTheCut() async throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let (store, accounts) = try Self.setUp(dir, accounts: 6)
    try Self.commits(30, store, accounts, seed: 4)
    try store.truncate(.keepCommits(5))
    let refused = try store.consumerGroup("late", member: "a", options: GroupOptions(lease: 600, partitions: 4))
    do {
      try await refused.run { _ in }
      Issue.record("a group behind the cut ran")
    } catch let e as StoreError {
      #expect(e.code == .historyTruncated, "\(e)")
    }
    let journal = Journal()
    let options = GroupOptions(lease: 600, partitions: 4, fromBase: true)
    let member = try store.consumerGroup("late", member: "a", options: options)
    let runs = Task { try await member.run { c in journal.record(c.metadata.base == nil ? "commit" : "base", c) } }
    let end = try store.lastSequence()
    try await Self.eventually("the group goes on from the base") {
      try store.consumerGroups().first?.partitions.allSatisfy { $0.position >= end } == true
    }
    runs.cancel()
    _ = await runs.result
    let seen = journal.entries.withLock { $0 }
    #expect(seen.first?.member == "base")
    #expect(seen.filter { $0.member == "commit" }.count == 5)
  }

  @Test("bad input: names, options out of range, another partition count; nothing written")
  func badInput() async throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let (store, _) = try Self.setUp(dir, accounts: 1)
    #expect(throws: ServiceError.self) { try store.consumerGroup("a:b", member: "m") }
    #expect(throws: ServiceError.self) { try store.consumerGroup("g", member: "") }
    for options in [
      GroupOptions(lease: 0), GroupOptions(lease: .nan), GroupOptions(partitions: 0), GroupOptions(partitions: 5_000),
      GroupOptions(maxAttempts: 0), GroupOptions(backoff: -1),
    ] {
      let e = #expect(throws: ServiceError.self) { try store.consumerGroup("g", member: "m", options: options) }
      #expect(e?.code == .invalidGroup, "\(options)")
    }
    #expect(try store.consumerGroups().isEmpty)
    let first = try store.consumerGroup("g", member: "a", options: GroupOptions(partitions: 4))
    try await first.join()
    let other = #expect(throws: ServiceError.self) {
      try store.consumerGroup("g", member: "b", options: GroupOptions(partitions: 8))
    }
    #expect(other?.code == .invalidGroup)
    #expect(other?.description.contains("4 partitions") == true)
  }
}
