import EventGraph
import Foundation
import TestSupport
import Testing

/// Consumer groups across processes (Docs/services.md, "Consumer groups"): member
/// processes killed with SIGKILL and started again while commits land.
@Suite("Consumer groups across processes", .serialized)
struct ConsumerGroupKillTests {
  /// One handling a member journaled: when it began and ended, the commit, its objects.
  struct Handling {
    let began: UInt64
    let ended: UInt64
    let sequence: UInt64
    let objects: [UInt64]
  }

  static func journal(_ path: String) -> [Handling] {
    let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    return text.split(separator: "\n").compactMap { line in
      let f = line.split(separator: " ", omittingEmptySubsequences: false)
      // A line cut short by the kill is not a handling.
      guard f.count == 4, let b = UInt64(f[0]), let e = UInt64(f[1]), let s = UInt64(f[2]) else { return nil }
      return Handling(began: b, ended: e, sequence: s, objects: f[3].split(separator: ",").compactMap { UInt64($0) })
    }
  }

  @Test(
    "4 member processes, killed and restarted at random while 1,500 commits land (10,000 under Tools/stress): every commit handled, each object's commits in order"
  )
  func killedMembers() async throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/s"
    #expect(try ToolRunner.run("StressWriter", [path, "--count", "0"]).status == 0)
    let store = try EventStore(path: path)
    let items = try #require(
      try store.write { tx in
        try (0..<30).map { i in try tx.insert("Item", ["batch": .int64(0), "payload": .string("item \(i)")]) }
      }.value)
    var members: [Child?] = Array(repeating: nil, count: 4)
    var starts = [Int](repeating: 0, count: 4)
    func start(_ m: Int) throws {
      starts[m] += 1
      members[m] = try Child(
        "StressWriter",
        [
          path, "--group", "ledger", "--member", "m\(m)", "--journal", "\(dir)/m\(m)-\(starts[m]).log", "--lease",
          "0.5",
        ])
    }
    for m in 0..<4 { try start(m) }
    var rng = SeededGenerator(seed: 0x6B01)
    // 1,500 commits here; Tools/stress (factor 10 by default) makes the 10,000 and more.
    let total = stressFactor > 1 ? 1_000 * stressFactor : 1_500
    for i in 0..<total {
      let a = items[Int(rng.next() % UInt64(items.count))]
      let b = items[Int(rng.next() % UInt64(items.count))]
      let two = rng.next() % 3 == 0
      try store.write { tx in
        try tx.set(a, "batch", .int64(Int64(i + 1)))
        if two { try tx.set(b, "payload", .string("w\(i)")) }
      }
      // Every 100 commits, a member killed, and started again 50 commits later.
      if i % 100 == 40 {
        let m = Int(rng.next() % 4)
        members[m]?.sigkill()
        _ = members[m]?.finish(seconds: 30)
        members[m] = nil
      }
      if i % 100 == 90 { for m in 0..<4 where members[m] == nil { try start(m) } }
    }
    for m in 0..<4 where members[m] == nil { try start(m) }
    let end = try store.lastSequence()
    for _ in 0..<12_000 {
      if try store.consumerGroups().first?.partitions.allSatisfy({ $0.position >= end }) == true { break }
      try await Task.sleep(for: .milliseconds(10))
    }
    let status = try #require(try store.consumerGroups().first)
    #expect(status.partitions.allSatisfy { $0.position >= end }, "the group did not reach the log's end within 120 s")
    for m in members { m?.sigkill() }
    for m in members { _ = m?.finish(seconds: 30) }

    let files = (try? FileManager.default.contentsOfDirectory(atPath: dir))?.filter { $0.hasSuffix(".log") } ?? []
    let handlings = files.flatMap { Self.journal(dir + "/" + $0) }
    let commits = try store.commitRecords(from: 1, maxCommits: 100_000, maxBytes: .max).map { try $0.decoded() }
    // Every commit handled, at least once (one handled but not acknowledged when its member
    // was killed is handled again).
    let handled = Set(handlings.map(\.sequence))
    #expect(Set(commits.map(\.firstSequence)).subtracting(handled).isEmpty)
    #expect(status.parked.isEmpty)
    // Each object's commits in order: every handling of a commit began after some handling
    // of the object's commit before it had ended (the monotonic clock is the machine's).
    var byObject: [UInt64: [UInt64]] = [:]
    for c in commits {
      for o in Set(c.events.map(\.object.rawValue)) { byObject[o, default: []].append(c.firstSequence) }
    }
    let bySequence = Dictionary(grouping: handlings, by: \.sequence)
    var checked = 0
    for (o, sequences) in byObject {
      for (earlier, later) in zip(sequences, sequences.dropFirst()) {
        let endedFirst = bySequence[earlier]?.map(\.ended).min() ?? .max
        for h in bySequence[later] ?? [] {
          #expect(h.began >= endedFirst, "object \(o): commit at \(later) began before the one at \(earlier) ended")
          checked += 1
        }
      }
    }
    #expect(checked > 1_000)
    #expect(starts.reduce(0, +) > 4, "members were killed and started again")
  }

  @Test("eventtool consumers and parked: groups with their partitions and lag, parked commits retried and skipped")
  func commands() async throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/s"
    #expect(try ToolRunner.run("StressWriter", [path, "--count", "3"]).status == 0)
    do {
      let store = try EventStore(path: path)
      let group = try store.consumerGroup(
        "mail", member: "a", options: GroupOptions(lease: 5, partitions: 2, maxAttempts: 1, backoff: 0))
      let end = try store.lastSequence()
      let run = Task { try await group.run { c in if c.number == 2 { throw Refusal() } } }
      for _ in 0..<6_000 {
        if try store.consumerGroups().first?.partitions.allSatisfy({ $0.position >= end }) == true { break }
        try await Task.sleep(for: .milliseconds(10))
      }
      run.cancel()
      _ = await run.result
    }
    let listed = try ToolRunner.eventtool(["consumers", path])
    #expect(listed.status == 0, "\(listed.err)")
    #expect(listed.out.contains("group mail: 2 partitions"), "\(listed.out)")
    #expect(listed.out.contains("lag 0, 1 parked"), "\(listed.out)")
    let json = try ToolRunner.eventtool(["consumers", path, "--json"])
    #expect(json.out.contains(#""name": "mail""#) && json.out.contains(#""parked": 1"#), "\(json.out)")
    let parked = try ToolRunner.eventtool(["parked", path, "mail", "--json"])
    #expect(parked.status == 0)
    let sequence = try #require(
      parked.out.split(separator: ",").first { $0.contains(#""sequence""#) }.flatMap {
        UInt64($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces))
      })
    #expect(try ToolRunner.eventtool(["parked", path, "mail"]).out.contains("sequence \(sequence) (commit 2"))
    #expect(try ToolRunner.eventtool(["parked", path, "mail", "--retry", "\(sequence)"]).status == 0)
    #expect(try ToolRunner.eventtool(["parked", path, "mail", "--json"]).out.contains(#""retry": true"#))
    #expect(try ToolRunner.eventtool(["parked", path, "mail", "--skip", "\(sequence)"]).status == 0)
    #expect(try ToolRunner.eventtool(["parked", path, "mail"]).out.contains("0 parked commits"))
  }

  struct Refusal: Error {}
}

extension Child {
  /// Kills the child with SIGKILL, as a crash would.
  func sigkill() {
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
  }
}
