import EventGraphLocking
import Foundation
import TestSupport
import Testing

@testable import EventGraph

/// The service tests' model: items with a required name, and a counter.
enum ServiceFixtures {
  static func model() throws -> Model {
    try Model(
      name: "Service", version: 1,
      entities: [
        EntityDescription(
          name: "Item",
          attributes: [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(name: "task", type: .int64, isOptional: true),
          ]),
        EntityDescription(name: "Counter", attributes: [AttributeDescription(name: "value", type: .int64)]),
      ])
  }

  /// The names of the live items.
  static func itemNames(_ store: EventStore) throws -> [String] {
    try store.read { s in try s.objects(of: "Item").compactMap { try s.value($0, "name")?.stringValue } }
  }
}

/// A flag shared between a test and the threads it starts.
final class SharedFlag: Sendable {
  private let value = Locked(false)
  func set() { value.withLock { $0 = true } }
  var isSet: Bool { value.withLock { $0 } }
  /// Waits (politely, from async code) until the flag is set.
  func wait() async throws {
    while !isSet { try await Task.sleep(for: .milliseconds(2)) }
  }
}

struct Refusal: Error, Equatable {}

/// How many times each labelled closure ran.
final class RunCounts: Sendable {
  private let counts = Locked<[String: Int]>([:])
  func count(_ label: String) { counts.withLock { $0[label, default: 0] += 1 } }
  subscript(label: String) -> Int { counts.withLock { $0[label, default: 0] } }
}

/// A commit whose closure holds the store's writer thread until released: the requests
/// made meanwhile queue behind it, and its batch takes them when the closure returns.
struct WriterHolder {
  let commit: Task<CommitResult<ObjectID>, any Error>
  private let release = SharedFlag()

  /// Starts the commit (inserting an Item named `name`) and waits until its closure runs.
  init(_ store: EventStore, name: String) async throws {
    let running = SharedFlag()
    let release = release
    commit = Task {
      try await store.commit { tx in
        running.set()
        while !release.isSet { usleep(1000) }
        return try tx.insert("Item", ["name": .string(name)])
      }
    }
    try await running.wait()
  }

  /// Lets the closure finish, and waits for the commit.
  func finish() async throws -> CommitResult<ObjectID> {
    release.set()
    return try await commit.value
  }
}

@Suite("Committing from many tasks: group commit, conflicts, idempotency, bad input")
struct ServiceCommitTests {
  @Test("a commit returns its place in the log and the closure's value")
  func basicCommit() async throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    let first = try await store.commit { tx in try tx.insert("Item", ["name": .string("one")]) }
    let id = try #require(first.value)
    #expect(first.commit?.number == 1)
    #expect(first.commit?.firstSequence == 1)
    #expect(!first.isDuplicate)
    #expect(try store.read { try $0.value(id, "name") } == .string("one"))
    let nothing = try await store.commit { _ in 42 }
    #expect(nothing.commit == nil)
    #expect(nothing.value == 42)
    #expect(try store.lastSequence() == first.commit?.lastSequence)
  }

  @Test("64 tasks committing at once: each valid commit lands once, each invalid or conflicting one is refused alone")
  func sixtyFourTasks() async throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    let counter = try store.write { tx throws in try tx.insert("Counter", ["value": .int64(0)]) }.value!
    let rounds = 6 * stressFactor
    struct Tally: Sendable {
      var landed: [String] = []
      var refused = 0
      var conflicts = 0
      var increments = 0
      var surprises: [String] = []
    }
    let tallies = try await withThrowingTaskGroup(of: Tally.self) { group in
      for t in 0..<64 {
        group.addTask {
          var tally = Tally()
          for r in 0..<rounds {
            // Valid.
            let name = "t\(t)-r\(r)"
            let result = try await store.commit { tx in
              try tx.insert("Item", ["name": .string(name), "task": .int64(Int64(t))])
            }
            if result.commit != nil { tally.landed.append(name) }
            // Fails validation: an item without its required name.
            do {
              try await store.commit { tx in try tx.insert("Item", ["task": .int64(Int64(t))]) }
              tally.surprises.append("an item without a name landed")
            } catch let e as StoreError where e.code == .validation && e.property == "name" {
              tally.refused += 1
            }
            // The closure throws after changing things.
            do {
              try await store.commit { tx in
                try tx.insert("Item", ["name": .string("thrown")])
                throw Refusal()
              }
              tally.surprises.append("a throwing closure landed")
            } catch is Refusal {
              tally.refused += 1
            }
            // Read, then increment if nobody moved the counter meanwhile.
            let (value, version) = try store.read { s in
              (try s.value(counter, "value")?.integerValue ?? -1, try s.version(of: counter))
            }
            do {
              try await store.commit(expecting: [.object(counter, version: version)]) { tx in
                try tx.set(counter, "value", .int64(value + 1))
              }
              tally.increments += 1
            } catch let e as ConflictError {
              if case .object(counter, _) = e.subject, e.expected == version, e.actual > version {
                tally.conflicts += 1
              } else {
                tally.surprises.append("conflict \(e)")
              }
            }
            // Expects an empty log: always refused.
            do {
              try await store.commit(expecting: [.logEnd(0)]) { tx in try tx.insert("Item", ["name": .string("late")]) }
              tally.surprises.append("a commit expecting an empty log landed")
            } catch let e as ConflictError where e.subject == .log && e.expected == 0 {
              tally.conflicts += 1
            }
          }
          return tally
        }
      }
      var all: [Tally] = []
      for try await t in group { all.append(t) }
      return all
    }
    let landed = tallies.flatMap(\.landed)
    let increments = tallies.map(\.increments).reduce(0, +)
    #expect(tallies.flatMap(\.surprises).isEmpty)
    #expect(landed.count == 64 * rounds)
    #expect(Set(landed).count == landed.count)
    #expect(tallies.map(\.refused).reduce(0, +) == 64 * rounds * 2)
    #expect(increments + tallies.map(\.conflicts).reduce(0, +) == 64 * rounds * 2)
    #expect(increments >= 1)
    // Every valid commit is in the store exactly once, and nothing of the refused ones.
    #expect(try ServiceFixtures.itemNames(store).sorted() == landed.sorted())
    try store.read { s throws in
      #expect(try s.value(counter, "value") == .int64(Int64(increments)))
      #expect(try s.logEnd().commit == UInt64(1 + landed.count + increments))
    }
    #expect(try store.verify().isOK)
  }

  @Test("a conflict names the object that moved, and the version it moved to")
  func conflictMessage() async throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    let item = try await store.commit { tx in try tx.insert("Item", ["name": .string("a")]) }
    let id = try #require(item.value)
    let v1 = try store.read { try $0.version(of: id) }
    #expect(v1 == item.commit?.firstSequence)
    let moved = try await store.commit(expecting: [.object(id, version: v1)]) { tx in
      try tx.set(id, "name", .string("b"))
    }
    #expect(try store.read { try $0.version(of: id) } == moved.commit?.firstSequence)
    let refusal = await #expect(throws: ConflictError.self) {
      try await store.commit(expecting: [.object(id, version: v1)]) { tx in try tx.set(id, "name", .string("c")) }
    }
    #expect(
      refusal?.description
        == "Item/\(id.rawValue) moved: the commit expected version \(v1), but its last commit is now at \(moved.commit?.firstSequence ?? 0)"
    )
    #expect(try store.read { try $0.value(id, "name") } == .string("b"))
    #expect(try store.read { try $0.version(of: ObjectID(999)) } == 0)
  }

  @Test("a retried commit with the same idempotency key lands once, before and after reopening the store")
  func idempotentRetries() async throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/store"
    let first: CommitInfo?
    do {
      let store = try EventStore.create(at: path, model: try ServiceFixtures.model())
      let made = try await store.commit(idempotencyKey: "order-1") { tx in
        try tx.insert("Item", ["name": .string("once")])
      }
      first = made.commit
      #expect(first != nil)
      let retried = try await store.commit(idempotencyKey: "order-1") { tx in
        try tx.insert("Item", ["name": .string("once")])
      }
      #expect(retried.isDuplicate)
      #expect(retried.commit == first)
      #expect(retried.value == nil)
      // Concurrent retries of a new key: one lands, every caller learns the same commit.
      let results = try await withThrowingTaskGroup(of: CommitResult<ObjectID>.self) { group in
        for _ in 0..<16 {
          group.addTask {
            try await store.commit(metadata: CommitMetadata(idempotencyKey: "order-2")) { tx in
              try tx.insert("Item", ["name": .string("twice?")])
            }
          }
        }
        var all: [CommitResult<ObjectID>] = []
        for try await r in group { all.append(r) }
        return all
      }
      #expect(results.filter { !$0.isDuplicate }.count == 1)
      #expect(Set(results.map(\.commit)).count == 1)
    }
    // The store object is gone; a new one on the same directory still knows the keys.
    let store = try EventStore(path: path)
    let afterReopen = try await store.commit(idempotencyKey: "order-1") { tx in
      try tx.insert("Item", ["name": .string("once")])
    }
    #expect(afterReopen.isDuplicate)
    #expect(afterReopen.commit == first)
    #expect(try ServiceFixtures.itemNames(store).sorted() == ["once", "twice?"])
    #expect(try store.read { try $0.logEnd().commit } == 2)
    #expect(try store.verify().isOK)
  }

  @Test(
    "the synchronous write answers a repeated idempotency key as commit does: the first commit, the closure not run")
  func synchronousRetry() async throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    let metadata = CommitMetadata(idempotencyKey: "import-7")
    let first = try store.write(metadata: metadata) { tx throws in try tx.insert("Item", ["name": .string("a")]) }
    let info = try #require(first.commit)
    #expect(!first.isDuplicate && first.value != nil)
    var ran = false
    let again = try store.write(metadata: metadata) { tx throws in
      ran = true
      return try tx.insert("Item", ["name": .string("b")])
    }
    #expect(!ran)
    #expect(again.isDuplicate && again.commit == info && again.value == nil)
    let retried = try await store.commit(metadata: metadata) { tx in try tx.insert("Item", ["name": .string("c")]) }
    #expect(retried.isDuplicate && retried.commit == info)
    #expect(try ServiceFixtures.itemNames(store) == ["a"])
    #expect(try store.read { try $0.logEnd().commit } == 1)
  }

  @Test("an idempotency key that is empty or longer than 400 bytes is refused by both APIs, nothing written")
  func invalidKeys() async throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    for key in ["", String(repeating: "k", count: 401)] {
      #expect(throws: ServiceError.invalidIdempotencyKey(key)) {
        try store.write(metadata: CommitMetadata(idempotencyKey: key)) { tx throws in
          try tx.insert("Item", ["name": .string("a")])
        }
      }
      await #expect(throws: ServiceError.invalidIdempotencyKey(key)) {
        try await store.commit(idempotencyKey: key) { tx in try tx.insert("Item", ["name": .string("a")]) }
      }
      #expect(throws: ServiceError.invalidIdempotencyKey(key)) {
        try store.write { tx throws in
          tx.metadata.idempotencyKey = key
          return try tx.insert("Item", ["name": .string("a")])
        }
      }
    }
    let longest = String(repeating: "k", count: 400)
    #expect(
      try store.write(metadata: CommitMetadata(idempotencyKey: longest)) { tx throws in
        try tx.insert("Item", ["name": .string("b")])
      }.commit != nil)
    #expect(try ServiceFixtures.itemNames(store) == ["b"])
  }

  @Test("a key the closure sets itself is checked too: the retry is refused, in both APIs")
  func keySetInsideTheClosure() async throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    let first = try store.write { tx throws in
      tx.metadata.idempotencyKey = "inside-1"
      return try tx.insert("Item", ["name": .string("a")])
    }.commit
    let info = try #require(first)
    #expect(throws: ServiceError.alreadyCommitted(key: "inside-1", commit: info)) {
      try store.write { tx throws in
        tx.metadata.idempotencyKey = "inside-1"
        return try tx.insert("Item", ["name": .string("a")])
      }
    }
    await #expect(throws: ServiceError.alreadyCommitted(key: "inside-1", commit: info)) {
      try await store.commit { tx in
        tx.metadata.idempotencyKey = "inside-1"
        return try tx.insert("Item", ["name": .string("a")])
      }
    }
    #expect(try ServiceFixtures.itemNames(store) == ["a"])
    #expect(try store.verify().isOK)
  }

  @Test("idempotency keys must be 1 to 400 bytes", arguments: ["", String(repeating: "k", count: 401)])
  func badKeys(key: String) async throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    await #expect(throws: ServiceError.invalidIdempotencyKey(key)) {
      try await store.commit(idempotencyKey: key) { tx in try tx.insert("Item", ["name": .string("x")]) }
    }
  }

  @Test("a task cancelled before it commits is told so, and nothing is written")
  func cancelledBeforeCommit() async throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    let task = Task {
      while !Task.isCancelled { await Task.yield() }
      return try await store.commit { tx in try tx.insert("Item", ["name": .string("never")]) }
    }
    task.cancel()
    await #expect(throws: CancellationError.self) { try await task.value }
    #expect(try ServiceFixtures.itemNames(store).isEmpty)
  }

  @Test("a cancelled commit still queued is removed; one the writer has taken lands, and each caller is told which")
  func cancelledWhileQueued() async throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    // Hold LMDB's writer lock from another thread, so the writer thread blocks on it with
    // the first request taken while the second waits in the queue.
    let holding = SharedFlag()
    let release = SharedFlag()
    let blocker = Thread {
      _ = try? store.write { tx in
        holding.set()
        while !release.isSet { usleep(1000) }
        try tx.insert("Item", ["name": .string("blocker")])
      }
    }
    blocker.start()
    try await holding.wait()
    let taken = Task { try await store.commit { tx in try tx.insert("Item", ["name": .string("taken")]) } }
    try await Task.sleep(for: .milliseconds(300))
    let queued = Task { try await store.commit { tx in try tx.insert("Item", ["name": .string("queued")]) } }
    try await Task.sleep(for: .milliseconds(100))
    taken.cancel()
    queued.cancel()
    release.set()
    let landed = try await taken.value
    #expect(landed.commit != nil)
    await #expect(throws: CancellationError.self) { try await queued.value }
    #expect(try ServiceFixtures.itemNames(store).sorted() == ["blocker", "taken"])
    #expect(try store.verify().isOK)
  }

  @Test("a store opened read-only refuses commits, acknowledgements and projections, and still reads and follows")
  func readOnly() async throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/store"
    do {
      let store = try EventStore.create(at: path, model: try ServiceFixtures.model())
      try store.write { tx throws in try tx.insert("Item", ["name": .string("a")]) }
    }
    let store = try EventStore(path: path, options: StoreOptions(readOnly: true))
    await #expect(throws: StoreError.readOnly(path: path)) {
      try await store.commit { tx in try tx.insert("Item", ["name": .string("b")]) }
    }
    await #expect(throws: StoreError.readOnly(path: path)) {
      try await store.consumer("c").acknowledge(through: 1)
    }
    #expect(throws: StoreError.readOnly(path: path)) { try store.register(EntityCountProjection()) }
    #expect(try store.consumer("c").position() == 0)
    var commits = store.events().makeAsyncIterator()
    #expect(try await commits.next()?.number == 1)
    #expect(try ServiceFixtures.itemNames(store) == ["a"])
  }

  @Test("a second store object on the same directory is refused while the first is open")
  func secondStoreObject() throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    #expect(throws: StoreError.alreadyOpen(path: store.path)) { try EventStore(path: store.path) }
  }

  @Test("a refused commit in a batch leaves the others of the batch in place")
  func refusedAloneInABatch() async throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    let count = 200 * stressFactor
    let outcomes = await withTaskGroup(of: (Int, Bool).self) { group in
      for i in 0..<count {
        group.addTask {
          do {
            try await store.commit { tx in
              try tx.insert("Item", ["name": .string("i\(i)")])
              if i % 3 == 0 { throw Refusal() }
            }
            return (i, true)
          } catch {
            return (i, false)
          }
        }
      }
      var all: [Int: Bool] = [:]
      for await (i, ok) in group { all[i] = ok }
      return all
    }
    for (i, ok) in outcomes { #expect(ok == (i % 3 != 0)) }
    let expected = (0..<count).filter { $0 % 3 != 0 }.map { "i\($0)" }
    #expect(try ServiceFixtures.itemNames(store).sorted() == expected.sorted())
    #expect(try store.verify().isOK)
  }

  @Test(
    "commits run straight in their batch; a refusal after writing reruns the batch nested, and the next 16; one before costs nothing"
  )
  func speculativeBatches() async throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    let runs = RunCounts()
    /// How the middle commit of a batch of three ends.
    enum Middle { case lands, refusedAfterWriting, refusedBeforeWriting }
    /// One batch: a holder and three commits, `name`-a, -b and -c, queued while the holder
    /// runs, which the batch takes when the holder is done; returns how many times each of
    /// the three closures ran.
    func batchOfThree(_ name: String, _ middle: Middle) async throws -> [Int] {
      let before = store.service.batchesCommitted
      let holder = try await WriterHolder(store, name: name + "-holder")
      var tasks: [Task<Bool, Never>] = []
      for (i, part) in ["a", "b", "c"].enumerated() {
        let label = "\(name)-\(part)"
        tasks.append(
          Task {
            do {
              try await store.commit { tx in
                runs.count(label)
                if middle == .refusedBeforeWriting && part == "b" { throw Refusal() }
                try tx.insert("Item", ["name": .string(label)])
                if middle == .refusedAfterWriting && part == "b" { throw Refusal() }
              }
              return true
            } catch {
              return false
            }
          })
        // Queued in this order, all three before the holder's closure returns.
        while store.service.queue.waiting < i + 1 { try await Task.sleep(for: .milliseconds(1)) }
      }
      _ = try await holder.finish()
      var landed: [Bool] = []
      for t in tasks { landed.append(await t.value) }
      #expect(landed == [true, middle == .lands, true])
      #expect(store.service.batchesCommitted - before == 1, "the holder and the three share one batch")
      return ["a", "b", "c"].map { part in runs["\(name)-\(part)"] }
    }
    var fillerCount = 0
    func fillers(_ n: Int) async throws {
      for _ in 0..<n {
        fillerCount += 1
        let name = "filler\(fillerCount)"
        try await store.commit { tx in try tx.insert("Item", ["name": .string(name)]) }
      }
    }
    // Batches, one by one: 1, straight: b's refusal drops the transaction after the holder,
    // a and b ran, and all run again, nested; the next 16 batches (2 to 17) are nested.
    #expect(try await batchOfThree("first", .refusedAfterWriting) == [2, 2, 1])
    // 2, nested: b's refusal costs no rerun.
    #expect(try await batchOfThree("second", .refusedAfterWriting) == [1, 1, 1])
    // 3 to 16 fillers; 17, the 16th batch after the refusal: nested still.
    try await fillers(14)
    #expect(try await batchOfThree("third", .refusedAfterWriting) == [1, 1, 1])
    // 18, straight again: b throws before it writes, which needs no rerun and keeps the
    // batches straight, so 19 is straight too.
    #expect(try await batchOfThree("fourth", .refusedBeforeWriting) == [1, 1, 1])
    #expect(try await batchOfThree("fifth", .refusedAfterWriting) == [2, 2, 1])
    let names = Set(try ServiceFixtures.itemNames(store))
    for batch in ["first", "second", "third", "fourth", "fifth"] {
      #expect(names.isSuperset(of: [batch + "-a", batch + "-c", batch + "-holder"]))
      #expect(!names.contains(batch + "-b"))
    }
    let expected = 5 * 3 + fillerCount
    #expect(names.count == expected)
    #expect(try store.verify().isOK)
  }

  @Test("a batch that fills the map runs again in a bigger one: every commit lands once, in its caller's order")
  func batchGrowsTheMap() async throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let store = try EventStore.create(
      at: dir + "/store", model: try ServiceFixtures.model(), options: StoreOptions(initialMapSize: 1 << 20))
    // 32 tasks × 8 commits of ~6 KB: about 1.5 MB of log alone, so batches fill the map.
    let big = String(repeating: "x", count: 6000)
    let sequences = try await withThrowingTaskGroup(of: [UInt64].self) { group in
      for t in 0..<32 {
        group.addTask {
          var mine: [UInt64] = []
          for r in 0..<8 {
            let result = try await store.commit { tx in
              try tx.insert("Item", ["name": .string("t\(t)-r\(r)-" + big), "task": .int64(Int64(t))])
            }
            mine.append(try #require(result.commit).firstSequence)
          }
          return mine
        }
      }
      var all: [[UInt64]] = []
      for try await mine in group { all.append(mine) }
      return all
    }
    #expect(store.env.info.mapSize > 1 << 20)
    // Each caller's commits landed in the order it made them, and none twice.
    for mine in sequences { #expect(mine == mine.sorted()) }
    #expect(Set(sequences.joined()).count == 32 * 8)
    let names = try ServiceFixtures.itemNames(store)
    #expect(names.count == 32 * 8)
    #expect(Set(names).count == 32 * 8)
    #expect(try store.verify().isOK)
  }

  @Test("commits queued while a batch runs join it, however few callers committed at once before")
  func queuedCommitsJoinTheRunningBatch() async throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    // Lone commits: the writer's estimate of how many callers commit at once falls to one.
    for i in 0..<8 { try await store.commit { tx in try tx.insert("Item", ["name": .string("lone\(i)")]) } }
    let before = store.service.batchesCommitted
    let holder = try await WriterHolder(store, name: "holder")
    let joiners = (0..<10).map { i in
      Task { try await store.commit { tx in try tx.insert("Item", ["name": .string("joiner\(i)")]) } }
    }
    while store.service.queue.waiting < joiners.count { try await Task.sleep(for: .milliseconds(1)) }
    let holderCommit = try #require(try await holder.finish().commit)
    var numbers: Set<UInt64> = [holderCommit.number]
    for j in joiners { numbers.insert(try #require(try await j.value.commit).number) }
    // One batch (one transaction, one fsync) for all eleven, each its own commit.
    #expect(store.service.batchesCommitted - before == 1)
    #expect(numbers.count == 11)
    #expect(try ServiceFixtures.itemNames(store).count == 8 + 11)
    #expect(try store.verify().isOK)
  }

  @Test("concurrent commits share write transactions: 32 tasks' commits land in far fewer batches, each once")
  func concurrentCommitsShareBatches() async throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    let (tasks, rounds) = (32, 10)
    let before = store.service.batchesCommitted
    try await withThrowingTaskGroup(of: Void.self) { group in
      for t in 0..<tasks {
        group.addTask {
          for r in 0..<rounds {
            try await store.commit { tx in try tx.insert("Item", ["name": .string("t\(t)-r\(r)")]) }
          }
        }
      }
      try await group.waitForAll()
    }
    let batches = store.service.batchesCommitted - before
    // Group commit: callers committing at once share a batch (one transaction, one fsync);
    // a writer that ran each commit alone would need one batch per commit.
    #expect(batches * 2 <= tasks * rounds, "\(tasks * rounds) commits took \(batches) batches")
    let names = try ServiceFixtures.itemNames(store)
    #expect(names.count == tasks * rounds)
    #expect(Set(names).count == tasks * rounds)
    #expect(try store.verify().isOK)
  }
}
