import EventGraphLocking
import Foundation
import Testing

@testable import EventGraph

@Suite("Following the log: subscriptions and durable consumers")
struct ServiceFollowTests {
  @Test("a subscription catches up from the log, then follows live commits in order, each once")
  func catchUpThenFollow() async throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    for i in 0..<5 { try store.write { tx throws in try tx.insert("Item", ["name": .string("old\(i)")]) } }
    let total = 45
    let follower = Task {
      var seen: [Commit] = []
      for try await c in store.events(after: 0) {
        seen.append(c)
        if seen.count == total { break }
      }
      return seen
    }
    // Live commits from many tasks, and from the synchronous API on another thread.
    try await withThrowingTaskGroup(of: Void.self) { group in
      for i in 0..<20 {
        group.addTask { try await store.commit { tx in try tx.insert("Item", ["name": .string("new\(i)")]) } }
      }
      group.addTask {
        for i in 0..<20 { try store.write { tx throws in try tx.insert("Item", ["name": .string("sync\(i)")]) } }
      }
      try await group.waitForAll()
    }
    let seen = try await follower.value
    #expect(seen.map(\.number) == Array(1...UInt64(total)))
    for (a, b) in zip(seen, seen.dropFirst()) { #expect(b.firstSequence == a.lastSequence + 1) }
    #expect(try store.read { try $0.commits() } == seen)
  }

  @Test("events(after:) starts after the given sequence")
  func startsAfter() async throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    var infos: [CommitInfo] = []
    for i in 0..<4 {
      if let c = try store.write({ tx throws in try tx.insert("Item", ["name": .string("i\(i)")]) }).commit {
        infos.append(c)
      }
    }
    var iterator = store.events(after: infos[1].lastSequence).makeAsyncIterator()
    #expect(try await iterator.next()?.number == 3)
    #expect(try await iterator.next()?.number == 4)
    #expect(iterator.position == infos[3].lastSequence)
  }

  @Test("a subscription waiting for commits ends with CancellationError when its task is cancelled")
  func cancelWhileWaiting() async throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    let follower = Task {
      var n = 0
      for try await _ in store.events() { n += 1 }
      return n
    }
    try await Task.sleep(for: .milliseconds(100))
    follower.cancel()
    await #expect(throws: CancellationError.self) { try await follower.value }
  }

  @Test("a consumer remembers its acknowledged position across reopening, and resumes after it")
  func consumerPosition() async throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/store"
    var acknowledged: UInt64 = 0
    do {
      let store = try EventStore.create(at: path, model: try ServiceFixtures.model())
      for i in 0..<6 { try store.write { tx throws in try tx.insert("Item", ["name": .string("i\(i)")]) } }
      let mailer = try store.consumer("mailer")
      #expect(try mailer.position() == 0)
      var handled = 0
      for try await commit in try mailer.commits() {
        handled += 1
        if handled == 3 {
          try await mailer.acknowledge(commit)
          acknowledged = commit.lastSequence
          break
        }
      }
      // Positions only move forward through acknowledge.
      try await mailer.acknowledge(through: 1)
      #expect(try mailer.position() == acknowledged)
      #expect(try store.consumerPositions().map(\.name) == ["mailer"])
    }
    let store = try EventStore(path: path)
    let mailer = try store.consumer("mailer")
    #expect(try mailer.position() == acknowledged)
    var iterator = try mailer.commits().makeAsyncIterator()
    #expect(try await iterator.next()?.number == 4)
    try await mailer.reset()
    #expect(try mailer.position() == 0)
    #expect(try store.consumer("other").position() == 0)
  }

  @Test("Consumer.run handles every commit and acknowledges as it goes")
  func consumerRun() async throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    for i in 0..<250 { try store.write { tx throws in try tx.insert("Item", ["name": .string("i\(i)")]) } }
    let consumer = try store.consumer("indexer")
    let seen = SeenCommits()
    let runner = Task { try await consumer.run(batch: 100) { commit in seen.add(commit.number) } }
    while seen.count < 250 { try await Task.sleep(for: .milliseconds(5)) }
    // Caught up: the last commit is acknowledged at once.
    let end = try store.lastSequence()
    while try consumer.position() != end { try await Task.sleep(for: .milliseconds(5)) }
    try await store.commit { tx in try tx.insert("Item", ["name": .string("live")]) }
    while seen.count < 251 { try await Task.sleep(for: .milliseconds(5)) }
    runner.cancel()
    await #expect(throws: CancellationError.self) { try await runner.value }
    #expect(seen.numbers == Array(1...251))
  }

  @Test("consumer names are checked", arguments: ["", "a:b", String(repeating: "n", count: 201)])
  func badNames(name: String) throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    #expect(throws: ServiceError.invalidName(name)) { try store.consumer(name) }
  }
}

/// Commit numbers gathered by a consumer's closure.
final class SeenCommits: Sendable {
  private let list = Locked<[UInt64]>([])
  func add(_ n: UInt64) { list.withLock { $0.append(n) } }
  var count: Int { list.withLock { $0.count } }
  var numbers: [UInt64] { list.withLock { $0 } }
}
