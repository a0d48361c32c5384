import Foundation
import LMDB
import TestSupport
import Testing

// The transactions run without fsync (`noSync`): where the zeros go, and that no data is
// lost, does not depend on the flush, and under `Tools/stress` (120 seeds beside the crash
// tests) some hundred durable commits a seed overran the time limit. The limit is ten
// minutes, as every suite's (MapGrowthTests.swift says why).
@Suite("File reserve: zeros written ahead of the pages in use", .timeLimit(.minutes(10)))
struct FileReserveTests {
  static let reserve = 256 << 10

  static func fileSize(_ dir: String) throws -> Int {
    try #require(try FileManager.default.attributesOfItem(atPath: dir + "/data.mdb")[.size] as? Int)
  }

  static func used(_ env: Environment) -> Int { env.info.usedSize }

  /// Random transactions of puts and deletes against `env`, checked against a dictionary
  /// after reopening; `check` runs at the start of each transaction and after its commit.
  static func randomWrites(
    seed: UInt64, in dir: String, options: EnvironmentOptions,
    check: (_ env: Environment, _ phase: Phase) throws -> Void
  ) throws {
    var rng = SeededGenerator(seed: seed)
    var expected: [UInt64: [UInt8]] = [:]
    do {
      let (env, db) = try openEnvironment(in: dir, options: options)
      for _ in 0..<40 {
        // Drawn first: a transaction that fills the map runs its body again.
        let changes: [(key: UInt64, value: [UInt8]?)] = (0..<rng.int(1...300)).map { _ in
          let key = rng.next() % 5000
          if rng.chance(0.15) { return (key, nil) }
          // One nonzero byte repeated: zeros written over it show, and it is cheap to make.
          return (key, [UInt8](repeating: UInt8(truncatingIfNeeded: rng.next()) | 1, count: rng.int(1...3000)))
        }
        try env.write { (txn: borrowing WriteTransaction) throws in
          try check(env, .begun)
          for (key, value) in changes {
            if let value {
              try txn.put(db, key: BigEndianKey(key), value: value)
            } else {
              try txn.delete(db, key: BigEndianKey(key))
            }
          }
        }
        for (key, value) in changes { expected[key] = value }
        try check(env, .committed)
      }
    }
    // Reopened without a reserve: every value as last written, nothing else.
    let (env, db) = try openEnvironment(in: dir)
    try env.read { (txn: borrowing ReadTransaction) throws in
      #expect(try txn.statistics(db).entries == expected.count)
      for (key, value) in expected { #expect(try txn.get(db, key: BigEndianKey(key)) == value, "key \(key)") }
    }
  }

  enum Phase { case begun, committed }

  @Test(
    "a write transaction begins with at least half the reserve written past the pages in use",
    arguments: stressSeeds([1, 2, 3]))
  func reserveKeptAhead(seed: UInt64) throws {
    try withTemporaryDirectory { dir in
      var usedAtStart = 0
      try Self.randomWrites(
        seed: seed, in: dir, options: .init(flags: [.noSync], mapSize: 256 << 20, fileReserve: Self.reserve)
      ) {
        env, phase in
        let file = try Self.fileSize(dir)
        let used = Self.used(env)
        switch phase {
        case .begun:
          usedAtStart = used
          #expect(file - used >= Self.reserve / 2, "file \(file), in use \(used)")
        case .committed:
          // Never more than one and a half reserves beyond the pages in use before the
          // transaction, nor less than what the transaction wrote.
          #expect(file >= used)
          #expect(file <= max(used, usedAtStart + Self.reserve * 3 / 2), "file \(file), in use \(used)")
        }
      }
    }
  }

  @Test("without a reserve the file ends where its pages do")
  func noReserve() throws {
    try withTemporaryDirectory { dir in
      try Self.randomWrites(seed: 7, in: dir, options: .init(flags: [.noSync], mapSize: 256 << 20)) {
        env, phase throws in
        #expect(try Self.fileSize(dir) == Self.used(env), "\(phase)")
      }
    }
  }

  @Test("the reserve stays inside the map: a small map gets none until it has grown")
  func reserveWithinTheMap() throws {
    try withTemporaryDirectory { dir in
      try Self.randomWrites(
        seed: 11, in: dir, options: .init(flags: [.noSync], mapSize: 128 << 10, fileReserve: 4 << 20)
      ) {
        env, _ throws in
        #expect(try Self.fileSize(dir) <= max(Self.used(env), env.info.mapSize))
      }
    }
  }

  @Test("a read-only environment writes no reserve")
  func readOnlyWritesNothing() throws {
    try withTemporaryDirectory { dir in
      do {
        let (env, db) = try openEnvironment(in: dir)
        _ = try env.write { txn throws(LMDBError) in try txn.put(db, key: BigEndianKey(1), value: bytes("one")) }
      }
      let before = try Self.fileSize(dir)
      let env = try Environment(path: dir, options: .init(flags: [.readOnly], fileReserve: Self.reserve))
      let db = try #require(try env.openDatabase("test", create: false))
      #expect(try env.read { txn in try txn.get(db, key: BigEndianKey(1)) } == bytes("one"))
      #expect(throws: LMDBError.self) { try env.write { _ throws(LMDBError) in } }
      #expect(try Self.fileSize(dir) == before)
    }
  }
}
