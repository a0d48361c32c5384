import Foundation
import LMDB
import Testing

@Suite("Writing the data file ahead", .timeLimit(.minutes(1)))
struct PreallocationTests {
  func fileSize(_ dir: String) throws -> Int {
    try #require(try FileManager.default.attributesOfItem(atPath: dir + "/data.mdb")[.size] as? Int)
  }

  func usedBytes(_ env: Environment) -> Int { (env.info.lastPage + 1) * env.info.pageSize }

  @Test("the file stays ahead of the pages in use, within the map, and every value reads back after reopening")
  func staysAheadAndIntact() throws {
    try withTemporaryDirectory { dir in
      let ahead = 1 << 20
      let options = EnvironmentOptions(mapSize: 4 << 20, preallocation: ahead)
      var written = 0
      do {
        let (env, db) = try openEnvironment(in: dir, options: options)
        for round in 0..<40 as Range<UInt64> {
          try env.write { txn throws(LMDBError) in
            for i in 0..<50 as Range<UInt64> {
              let k = round * 50 + i
              try txn.put(db, key: BigEndianKey(k), value: [UInt8](repeating: UInt8(truncatingIfNeeded: k), count: 900))
            }
          }
          written += 50
          // The next write transaction extends the file when less than half the distance
          // (an eighth of the file, at least 256 KiB) is left; never past the map.
          let size = try fileSize(dir)
          #expect(size >= usedBytes(env))
          #expect(size <= max(env.info.mapSize, usedBytes(env)))
        }
        // The map grew on the way (about 3.6 MB of values in a 4 MiB map); the file was
        // kept ahead of what is used.
        try env.write { _ throws(LMDBError) in }
        #expect(try fileSize(dir) > usedBytes(env))
      }
      let (env, db) = try openEnvironment(in: dir, options: options)
      try env.read { txn throws in
        #expect(try txn.statistics(db).entries == written)
        for k in [0, 1, 999, UInt64(written - 1)] as [UInt64] {
          #expect(try txn.get(db, key: BigEndianKey(k)) == [UInt8](repeating: UInt8(truncatingIfNeeded: k), count: 900))
        }
      }
    }
  }

  @Test("without the option the file grows only as LMDB writes pages")
  func offByDefault() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir, options: EnvironmentOptions(mapSize: 4 << 20))
      _ = try env.write { txn throws(LMDBError) in try txn.put(db, key: BigEndianKey(1), value: bytes("one")) }
      try env.write { _ throws(LMDBError) in }
      #expect(try fileSize(dir) < 256 << 10)
    }
  }
}
