import Foundation
import LMDB
import TestSupport
import Testing

@Suite("PageCheck: a data file's pages checked without the map")
struct PageCheckTests {
  /// An environment with several named databases, values small and large (overflow
  /// pages), deletes (free pages) and integer keys, closed when this returns.
  static func fill(_ dir: String, seed: UInt64, entries: Int = 3_000) throws {
    var g = SeededGenerator(seed: seed)
    let env = try Environment(
      path: dir, options: EnvironmentOptions(flags: .noSync, mapSize: 64 << 20, maxDatabases: 8))
    let names = ["alpha", "beta", "gamma"]
    let dbs = try names.map { try #require(try env.openDatabase($0)) }
    let ints = try #require(try env.openDatabase("ints", flags: .integerKey))
    for round in 0..<4 {
      try env.write { txn in
        for i in 0..<(entries / 4) {
          let db = dbs[Int.random(in: 0..<dbs.count, using: &g)]
          let key = bytes("k\(g.next() % 100_000)")
          let size = g.chance(0.02) ? Int.random(in: 5_000...20_000, using: &g) : Int.random(in: 0...120, using: &g)
          try txn.put(db, key: key, value: [UInt8](repeating: UInt8(truncatingIfNeeded: i), count: size))
          var n = UInt64(round * entries + i)
          try txn.put(ints, key: withUnsafeBytes(of: &n) { [UInt8]($0) }, value: bytes("v"))
        }
      }
      try env.write { txn in
        for db in dbs {
          try txn.withCursor(db) { c throws in
            var more = try c.first()
            var k = 0
            while more {
              let key = try c.key()
              more = try c.next()
              if k % 3 == 0 { _ = try txn.delete(db, key: key) }
              k += 1
            }
          }
        }
      }
    }
  }

  /// Opens the environment read-only and reads every entry of every database; LMDB's own
  /// errors are fine, a fault would end the test process.
  static func readEverything(_ dir: String) throws {
    guard let env = try? Environment(path: dir, options: EnvironmentOptions(flags: .readOnly, maxDatabases: 8))
    else { return }
    for (name, flags) in [("alpha", DatabaseFlags()), ("beta", []), ("gamma", []), ("ints", .integerKey)] {
      guard let db = try? env.openDatabase(name, flags: flags, create: false) else { continue }
      _ = try? env.read { txn in
        try txn.withCursor(db) { c throws in
          var more = try c.first()
          while more {
            _ = try c.withCurrent { k, v in k.count + v.count }
            more = try c.next()
          }
        }
      }
    }
  }

  @Test("an intact file passes, at either size of store", arguments: [UInt64(1), 2, 3])
  func intactFilePasses(seed: UInt64) throws {
    try withTemporaryDirectory { dir in
      try Self.fill(dir, seed: seed, entries: seed == 1 ? 40 : 4_000)
      let meta = try PageCheck.check(dataFile: dir + "/data.mdb")
      #expect(meta.lastPage > 2)
      let metas = try PageCheck.metaPages(dataFile: dir + "/data.mdb")
      #expect(metas.count == 2)
      #expect(metas.allSatisfy { (try? $0.get()) != nil })
    }
  }

  @Test("a truncated file is reported with the bytes it lacks")
  func truncatedFile() throws {
    try withTemporaryDirectory { dir in
      try Self.fill(dir, seed: 4)
      let file = dir + "/data.mdb"
      let meta = try PageCheck.check(dataFile: file)
      let needed = (meta.lastPage + 1) * meta.pageSize
      let handle = try #require(FileHandle(forUpdatingAtPath: file))
      try handle.truncate(atOffset: UInt64(needed / 2))
      try handle.close()
      do {
        try PageCheck.check(dataFile: file, full: false)
        Issue.record("a truncated file passed")
      } catch let damage as FileDamage {
        #expect(damage.detail.contains("truncated"))
        #expect(damage.detail.contains("\(needed - needed / 2) missing"))
      }
    }
  }

  @Test("a zeroed first page is damage that names the intact second meta page")
  func zeroedFirstPage() throws {
    try withTemporaryDirectory { dir in
      try Self.fill(dir, seed: 5)
      let file = dir + "/data.mdb"
      let handle = try #require(FileHandle(forUpdatingAtPath: file))
      try handle.seek(toOffset: 0)
      handle.write(Data(repeating: 0, count: 4096))
      try handle.close()
      let metas = try PageCheck.metaPages(dataFile: file)
      #expect((try? metas[0].get()) == nil)
      #expect((try? metas[1].get()) != nil)
      #expect(throws: FileDamage.self) { try PageCheck.check(dataFile: file) }
    }
  }

  @Test(
    "a byte flipped anywhere is either harmless to LMDB's reads or reported, never a trap",
    arguments: stressCases(4))
  func flippedBytes(seed: UInt64) throws {
    var g = SeededGenerator(seed: seed)
    try withTemporaryDirectory { dir in
      try Self.fill(dir, seed: 100 + seed)
      let file = dir + "/data.mdb"
      let original = try Data(contentsOf: URL(fileURLWithPath: file))
      var reported = 0
      for _ in 0..<150 {
        var damaged = original
        let at = Int.random(in: 0..<damaged.count, using: &g)
        damaged[at] ^= UInt8(1 << Int.random(in: 0..<8, using: &g))
        try damaged.write(to: URL(fileURLWithPath: file))
        do {
          try PageCheck.check(dataFile: file)
        } catch is FileDamage {
          reported += 1
          continue
        }
        // Passed: LMDB reads every entry of every database without faulting (a value may
        // have changed; that is for the records' own checksums to find).
        try Self.readEverything(dir)
      }
      // Most flips land in free space or values, which the check cannot see; some land in
      // headers, node tables and keys, which it must.
      #expect(reported > 0)
    }
  }
}
