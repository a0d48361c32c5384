import Foundation
import LMDB
import Testing

/// Commits that keep many keys in step, and a check that a snapshot is whole.
///
/// Every commit sets key 0 (the generation) and keys 1...width to the same new
/// generation, and adds one blob. A reader that ever sees keys that disagree or a blob
/// count that doesn't match has seen a torn snapshot; one that sees a generation older
/// than the last `write` that had returned before it began has seen a stale one.
///
/// What LMDB 0.9 does *not* promise, and these tests therefore don't ask: that a reader's
/// successive snapshots never go back. A reader that begins while a commit is in flight
/// can pick up that commit's meta page before `mdb_txn_commit` has published it, and the
/// next reader may then get the one before (reproduced with liblmdb alone, no Swift). So
/// a snapshot may be at most one generation ahead of the last returned `write`.
private enum Generations {
  static let width: UInt64 = 20
  static let blobBase: UInt64 = 1_000_000

  static func write(_ generation: UInt64, _ env: Environment, _ db: Database) throws {
    try env.write { txn throws(LMDBError) in
      try txn.put(db, key: BigEndianKey(0), value: BigEndianKey(generation))
      for k in 1...width { try txn.put(db, key: BigEndianKey(k), value: BigEndianKey(generation)) }
      try txn.put(db, key: BigEndianKey(blobBase + generation), value: [UInt8](repeating: 0xCD, count: 3000))
    }
  }

  /// Reads one snapshot and returns its generation, or a description of what was wrong.
  static func check(_ env: Environment, _ db: Database) throws -> Result<UInt64, Inconsistency> {
    try env.read { txn throws -> Result<UInt64, Inconsistency> in
      guard let generation = try txn.withValue(db, key: BigEndianKey(0), { BigEndianKey.decode($0) }) ?? nil
      else { return .failure(Inconsistency("no generation key")) }
      for k in 1...width {
        let value = try txn.withValue(db, key: BigEndianKey(k)) { BigEndianKey.decode($0) } ?? nil
        if value != generation {
          return .failure(
            Inconsistency("key \(k) is \(value.map(String.init) ?? "missing") in generation \(generation)"))
        }
      }
      // Generation 0 is written with its blob too: width + 1 keys, generation + 1 blobs.
      let entries = try txn.statistics(db).entries
      if entries != Int(width) + 1 + Int(generation) + 1 {
        return .failure(Inconsistency("\(entries) entries in generation \(generation)"))
      }
      let lastBlob = try txn.get(db, key: BigEndianKey(blobBase + generation))
      if lastBlob != [UInt8](repeating: 0xCD, count: 3000) {
        return .failure(Inconsistency("blob of generation \(generation) is wrong"))
      }
      return .success(generation)
    }
  }
}

/// The generation of the last `write` that returned, published by the writer.
private final class Watermark: Sendable {
  private let committed = Locked<UInt64>(0)
  func publish(_ generation: UInt64) { committed.withLock { $0 = generation } }
  var value: UInt64 { committed.withLock { $0 } }

  /// Reads one snapshot and checks it is whole and no older than the writes that returned
  /// before it began (and no more than the one commit in flight ahead of them).
  func check(_ env: Environment, _ db: Database) throws -> Result<UInt64, Inconsistency> {
    let floor = value
    let result = try Generations.check(env, db)
    let ceiling = value + 1
    if case .success(let g) = result, !(floor...ceiling).contains(g) {
      return .failure(Inconsistency("generation \(g) read between commits \(floor) and \(ceiling - 1)"))
    }
    return result
  }
}

struct Inconsistency: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

// Ten minutes, as every suite's time limit (MapGrowthTests.swift says why).
@Suite("Concurrency", .timeLimit(.minutes(10)))
struct ConcurrencyTests {
  @Test("readers on several threads see whole snapshots while a writer commits and grows the map")
  func readersOnThreads() throws {
    try withTemporaryDirectory { dir in
      // A small map, so that the writer has to grow it while readers are active.
      let (env, db) = try openEnvironment(in: dir, options: .init(mapSize: 256 << 10))
      try Generations.write(0, env, db)
      let generations: UInt64 = 150
      let done = Locked(false)
      let watermark = Watermark()
      let problems = Locked<[String]>([])
      let readsPerReader = Locked<[Int]>([])

      let writer: @Sendable () throws -> Void = {
        defer { done.withLock { $0 = true } }
        for g in 1...generations {
          try Generations.write(g, env, db)
          watermark.publish(g)
        }
      }
      let reader: @Sendable () throws -> Void = {
        var last: UInt64 = 0
        var reads = 0
        while true {
          let finished = done.withLock { $0 }
          switch try watermark.check(env, db) {
          case .success(let g):
            last = g
          case .failure(let problem):
            problems.withLock { $0.append(problem.description) }
          }
          reads += 1
          // One more read after the writer finished must see its last commit.
          if finished {
            if last != generations { problems.withLock { $0.append("last read saw generation \(last)") } }
            break
          }
        }
        readsPerReader.withLock { $0.append(reads) }
      }

      let errors = runOnThreads([writer] + Array(repeating: reader, count: 6))
      #expect(errors.isEmpty, "\(errors)")
      #expect(problems.withLock { $0 }.isEmpty, "\(problems.withLock { $0.prefix(10) })")
      #expect(readsPerReader.withLock { $0.count } == 6)
      #expect(env.info.mapSize > 256 << 10)
      #expect(env.info.readersUsed <= env.info.maxReaders)
    }
  }

  @Test("readers in tasks see whole snapshots while a writer task commits")
  func readersInTasks() async throws {
    try await withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir, options: .init(mapSize: 256 << 10))
      try Generations.write(0, env, db)
      let generations: UInt64 = 100
      let watermark = Watermark()
      let seen = try await withThrowingTaskGroup(of: [UInt64].self) { group in
        group.addTask {
          for g in 1...generations {
            try Generations.write(g, env, db)
            watermark.publish(g)
            await Task.yield()
          }
          return []
        }
        for _ in 0..<4 {
          group.addTask {
            var seen: [UInt64] = []
            for _ in 0..<150 {
              // `get()` throws the Inconsistency, failing the test with its description.
              seen.append(try watermark.check(env, db).get())
              await Task.yield()
            }
            return seen
          }
        }
        var all: [[UInt64]] = []
        for try await s in group where !s.isEmpty { all.append(s) }
        return all
      }
      #expect(seen.count == 4)
      #expect(seen.allSatisfy { $0.count == 150 })
      #expect(try Generations.check(env, db).get() == generations)
    }
  }

  @Test("writers on several threads take turns and every commit lands")
  func concurrentWriters() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir, options: .init(mapSize: 128 << 10))
      let writers = 4
      let commits = 60
      let bodies: [@Sendable () throws -> Void] = (0..<writers).map { w in
        {
          for c in 0..<commits {
            try env.write { txn throws(LMDBError) in
              // Read-modify-write of a shared counter: lost updates would show in its total.
              let count = try txn.get(db, key: "count").flatMap { $0.withUnsafeBytes { BigEndianKey.decode($0) } } ?? 0
              try txn.put(db, key: "count", value: BigEndianKey(count + 1))
              try txn.put(db, key: BigEndianKey(UInt64(w * 1000 + c)), value: [UInt8](repeating: UInt8(w), count: 2000))
            }
          }
        }
      }
      // A reader polls the environment's info while the writers grow the map.
      let stop = Locked(false)
      let poller: @Sendable () throws -> Void = {
        while !stop.withLock({ $0 }) {
          _ = env.info
          _ = try env.read { txn throws in try txn.get(db, key: "count") }
        }
      }
      let finished = Locked(0)
      let wrapped: [@Sendable () throws -> Void] = bodies.map { body in
        {
          defer {
            finished.withLock { n in
              n += 1
              if n == writers { stop.withLock { $0 = true } }
            }
          }
          try body()
        }
      }
      let errors = runOnThreads(wrapped + [poller])
      #expect(errors.isEmpty, "\(errors)")
      try env.read { txn throws in
        let count = try #require(try txn.get(db, key: "count")).withUnsafeBytes { BigEndianKey.decode($0) }
        #expect(count == UInt64(writers * commits))
        #expect(try txn.statistics(db).entries == writers * commits + 1)
      }
      #expect(env.info.mapSize > 128 << 10)
    }
  }

  @Test("info can be read on one thread while another grows the map")
  func infoDuringGrowth() throws {
    try withTemporaryDirectory { dir in
      let (env, _) = try openEnvironment(in: dir, options: .init(mapSize: 1 << 20))
      let stop = Locked(false)
      let sizes = Locked<Set<Int>>([])
      let errors = runOnThreads([
        {
          defer { stop.withLock { $0 = true } }
          // Every call remaps the file.
          for i in 1...3000 { try env.setMapSize((1 << 20) + i * 4096) }
        },
        {
          while !stop.withLock({ $0 }) {
            let size = env.info.mapSize
            sizes.withLock { _ = $0.insert(size) }
          }
        },
      ])
      #expect(errors.isEmpty, "\(errors)")
      #expect(env.info.mapSize == (1 << 20) + 3000 * 4096)
      // Every size seen was one the map really had.
      #expect(sizes.withLock { $0 }.allSatisfy { ($0 - (1 << 20)) % 4096 == 0 })
    }
  }

  @Test("copy(to:) on one thread while a writer grows the map gives a whole copy")
  func copyDuringGrowth() throws {
    try withTemporaryDirectory { dir in
      let source = dir + "/source"
      try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: false)
      let (env, db) = try openEnvironment(in: source, options: .init(mapSize: 128 << 10))
      try Generations.write(0, env, db)
      let generations: UInt64 = 120
      let done = Locked(false)
      let copies = Locked<[String]>([])
      let errors = runOnThreads([
        {
          defer { done.withLock { $0 = true } }
          for g in 1...generations { try Generations.write(g, env, db) }
        },
        {
          var n = 0
          while !done.withLock({ $0 }) {
            n += 1
            let target = dir + "/copy\(n)"
            try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: false)
            try env.copy(to: target)
            copies.withLock { $0.append(target) }
          }
        },
      ])
      #expect(errors.isEmpty, "\(errors)")
      #expect(env.info.mapSize > 128 << 10)
      let targets = copies.withLock { $0 }
      #expect(!targets.isEmpty)
      for target in targets {
        let copy = try Environment(path: target, options: .init(flags: [.readOnly]))
        let copied = try #require(try copy.openDatabase("test", create: false))
        let result = try Generations.check(copy, copied)
        #expect(throws: Never.self, "copy \(target)") { try result.get() }
      }
    }
  }

  @Test("a reader can be handed to another thread and used there")
  func readerMovesBetweenThreads() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      try env.write { txn throws(LMDBError) in _ = try txn.put(db, key: "k", value: bytes("before")) }
      let result = Locked<[UInt8]?>(nil)
      let held = HeldReader(try env.beginRead())
      try env.write { txn throws(LMDBError) in _ = try txn.put(db, key: "k", value: bytes("after")) }
      let errors = runOnThreads([
        {
          let value = try held.reader.get(db, key: "k")
          result.withLock { $0 = value }
        }
      ])
      #expect(errors.isEmpty)
      #expect(result.withLock { $0 } == bytes("before"))
      // The reader ends with `held`, after the other thread is done with it.
      #expect(try held.reader.get(db, key: "k") == bytes("before"))
    }
  }
}

/// A read transaction handed to another thread: that thread uses it while this one waits
/// in `runOnThreads`, never both at once.
private final class HeldReader: @unchecked Sendable {
  let reader: ReadTransaction

  init(_ reader: consuming ReadTransaction) { self.reader = reader }
}
