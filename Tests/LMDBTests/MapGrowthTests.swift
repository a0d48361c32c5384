import Foundation
import LMDB
import Testing

// The time limit only turns a hang into a failure: it counts from the test's start, waits
// for a thread of the pool included, and on two loaded cores tests of a second have waited
// minutes behind others (all five of this suite failed at 60 s once, 2026-12-02). Ten
// minutes, so that no verdict depends on the machine's speed.
@Suite("Map growth", .timeLimit(.minutes(10)))
struct MapGrowthTests {
  static let smallMap = 128 << 10

  @Test("one write larger than the whole map grows the map and succeeds")
  func oneLargeWrite() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir, options: .init(mapSize: Self.smallMap))
      let before = env.info.mapSize
      #expect(before == Self.smallMap)
      let value = [UInt8](repeating: 0x5A, count: 1000)
      // About 2 MB: sixteen times the initial map.
      try env.write { txn throws(LMDBError) in
        for i in 0..<2000 as Range<UInt64> { try txn.put(db, key: BigEndianKey(i), value: value) }
      }
      #expect(env.info.mapSize > before)
      #expect(env.info.mapSize >= 2_000_000)
      try env.read { txn throws in
        #expect(try txn.statistics(db).entries == 2000)
        #expect(try txn.get(db, key: BigEndianKey(0)) == value)
        #expect(try txn.get(db, key: BigEndianKey(1999)) == value)
      }
    }
  }

  @Test("many small writes that together exceed the map all land")
  func manySmallWrites() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir, options: .init(mapSize: Self.smallMap))
      for i in 0..<200 as Range<UInt64> {
        try env.write { txn throws(LMDBError) in
          _ = try txn.put(
            db, key: BigEndianKey(i), value: [UInt8](repeating: UInt8(truncatingIfNeeded: i), count: 5000))
        }
      }
      #expect(env.info.mapSize > Self.smallMap)
      try env.read { txn throws in
        #expect(try txn.statistics(db).entries == 200)
        #expect(try txn.get(db, key: BigEndianKey(199)) == [UInt8](repeating: 199, count: 5000))
      }
    }
  }

  @Test("a write that fills the map inside a nested transaction still grows and succeeds")
  func growthThroughNested() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir, options: .init(mapSize: Self.smallMap))
      try env.write { txn throws in
        try txn.put(db, key: "parent", value: bytes("p"))
        try txn.nested { child throws in
          for i in 0..<1000 as Range<UInt64> {
            try child.put(db, key: BigEndianKey(i), value: [UInt8](repeating: 1, count: 1000))
          }
        }
      }
      #expect(env.info.mapSize > Self.smallMap)
      try env.read { txn throws in
        #expect(try txn.get(db, key: "parent") == bytes("p"))
        #expect(try txn.statistics(db).entries == 1001)
      }
    }
  }

  @Test("a grown map is kept when the environment is reopened")
  func reopenAfterGrowth() throws {
    try withTemporaryDirectory { dir in
      var grown = 0
      do {
        let (env, db) = try openEnvironment(in: dir, options: .init(mapSize: Self.smallMap))
        try env.write { txn throws(LMDBError) in
          _ = try txn.put(db, key: "big", value: [UInt8](repeating: 9, count: 1 << 20))
        }
        grown = env.info.mapSize
      }
      #expect(grown > Self.smallMap)
      // Asking for the small size again: LMDB keeps a map large enough for the data.
      let (env, db) = try openEnvironment(in: dir, options: .init(mapSize: Self.smallMap))
      #expect(env.info.mapSize >= 1 << 20)
      #expect(try env.read { txn throws in try txn.get(db, key: "big")?.count } == 1 << 20)
      try env.write { txn throws(LMDBError) in
        _ = try txn.put(db, key: "more", value: [UInt8](repeating: 1, count: 1 << 20))
      }
      #expect(try env.read { txn throws in try txn.statistics(db).entries } == 2)
    }
  }

  @Test("a map-full error from a write the map cannot hold is mapFull when writing by hand")
  func mapFullByHand() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir, options: .init(mapSize: Self.smallMap))
      // beginWrite does not grow the map by itself: the caller sees mapFull.
      let error = #expect(throws: LMDBError.self) {
        let txn = try env.beginWrite()
        for i in 0..<1000 as Range<UInt64> {
          try txn.put(db, key: BigEndianKey(i), value: [UInt8](repeating: 1, count: 1000))
        }
        try txn.commit()
      }
      #expect(error == .mapFull)
      #expect(error.map { "\($0)" }?.contains("MDB_MAP_FULL") == true)
      #expect(try env.read { txn throws in try txn.statistics(db).entries } == 0)
    }
  }
}
