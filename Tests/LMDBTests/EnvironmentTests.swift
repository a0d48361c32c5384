import Foundation
import LMDB
import Testing

@Suite("Environment")
struct EnvironmentTests {
  // MARK: - Opening

  @Test("opening a directory that does not exist throws noSuchFile")
  func missingDirectory() throws {
    try withTemporaryDirectory { dir in
      let missing = dir + "/not-there"
      let error = #expect(throws: LMDBError.self) { try Environment(path: missing) }
      #expect(error == .noSuchFile)
      #expect(!FileManager.default.fileExists(atPath: missing))
    }
  }

  @Test("opening a directory whose data file is not LMDB throws invalid")
  func notLMDBDirectory() throws {
    try withTemporaryDirectory { dir in
      var garbage = [UInt8](repeating: 0, count: 16384)
      var generator = SystemRandomNumberGenerator()
      for i in garbage.indices { garbage[i] = generator.next() }
      #expect(FileManager.default.createFile(atPath: dir + "/data.mdb", contents: Data(garbage)))
      let error = #expect(throws: LMDBError.self) { try Environment(path: dir) }
      #expect(error == .invalid)
    }
  }

  @Test("opening a plain text file as a single-file environment throws invalid")
  func notLMDBFile() throws {
    try withTemporaryDirectory { dir throws in
      let file = dir + "/notes.txt"
      let text = String(repeating: "this is not a database\n", count: 1000)
      #expect(FileManager.default.createFile(atPath: file, contents: Data(text.utf8)))
      let error = #expect(throws: LMDBError.self) {
        try Environment(path: file, options: .init(flags: [.noSubdirectory]))
      }
      #expect(error == .invalid)
      // The file was left as it was.
      #expect(try String(contentsOfFile: file, encoding: .utf8) == text)
    }
  }

  @Test("an environment reopened after closing keeps its data")
  func reopen() throws {
    try withTemporaryDirectory { dir in
      do {
        let (env, db) = try openEnvironment(in: dir)
        try env.write { txn throws(LMDBError) in _ = try txn.put(db, key: "k", value: bytes("kept")) }
      }
      let env = try Environment(path: dir)
      let db = try #require(try env.openDatabase("test", create: false))
      #expect(try env.read { txn throws in try txn.get(db, key: "k") } == bytes("kept"))
    }
  }

  // MARK: - Databases

  @Test("opening a missing database without create returns nil")
  func missingDatabase() throws {
    try withTemporaryDirectory { dir in
      let env = try Environment(path: dir)
      #expect(try env.openDatabase("nope", create: false) == nil)
      #expect(try env.openDatabase("yes") != nil)
      #expect(try env.openDatabase("yes", create: false) != nil)
    }
  }

  @Test("named databases are separate key spaces")
  func separateDatabases() throws {
    try withTemporaryDirectory { dir in
      let env = try Environment(path: dir)
      let a = try #require(try env.openDatabase("a"))
      let b = try #require(try env.openDatabase("b"))
      #expect(a != b)
      try env.write { txn throws(LMDBError) in
        try txn.put(a, key: "k", value: bytes("in a"))
        try txn.put(b, key: "k", value: bytes("in b"))
      }
      try env.read { txn throws in
        #expect(try txn.get(a, key: "k") == bytes("in a"))
        #expect(try txn.get(b, key: "k") == bytes("in b"))
      }
    }
  }

  @Test("opening more databases than maxDatabases throws databasesFull")
  func tooManyDatabases() throws {
    try withTemporaryDirectory { dir in
      let env = try Environment(path: dir, options: .init(maxDatabases: 2))
      _ = try env.openDatabase("one")
      _ = try env.openDatabase("two")
      let error = #expect(throws: LMDBError.self) { try env.openDatabase("three") }
      #expect(error == .databasesFull)
    }
  }

  // MARK: - Read-only

  @Test("a read-only environment reads existing data")
  func readOnlyReads() throws {
    try withTemporaryDirectory { dir in
      do {
        let (env, db) = try openEnvironment(in: dir)
        try env.write { txn throws(LMDBError) in _ = try txn.put(db, key: "k", value: bytes("v")) }
      }
      let env = try Environment(path: dir, options: .init(flags: [.readOnly]))
      #expect(env.flags.contains(.readOnly))
      let db = try #require(try env.openDatabase("test"))
      #expect(try env.read { txn throws in try txn.get(db, key: "k") } == bytes("v"))
      // Asking for a database that isn't there doesn't try to create it.
      #expect(try env.openDatabase("other") == nil)
    }
  }

  @Test("writing to a read-only environment throws an LMDBError instead of crashing")
  func readOnlyWriteFails() throws {
    try withTemporaryDirectory { dir in
      do {
        let (env, db) = try openEnvironment(in: dir)
        try env.write { txn throws(LMDBError) in _ = try txn.put(db, key: "k", value: bytes("v")) }
      }
      let env = try Environment(path: dir, options: .init(flags: [.readOnly]))
      let db = try #require(try env.openDatabase("test"))
      var ran = false
      let error = #expect(throws: LMDBError.self) {
        try env.write { txn throws(LMDBError) in
          ran = true
          try txn.put(db, key: "k", value: bytes("changed"))
        }
      }
      #expect(error == .permissionDenied)
      #expect(!ran)
      #expect(throws: LMDBError.permissionDenied) { _ = try env.beginWrite() }
      // The environment is still usable for reads afterwards.
      #expect(try env.read { txn throws in try txn.get(db, key: "k") } == bytes("v"))
    }
  }

  // MARK: - Maintenance

  @Test("clearStaleReaders finds nothing to clear in a clean environment")
  func clearStaleReaders() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      try env.write { txn throws(LMDBError) in _ = try txn.put(db, key: "k", value: bytes("v")) }
      #expect(try env.clearStaleReaders() == 0)
      // A live reader of this process is not stale either.
      let reader = try env.beginRead()
      #expect(try env.clearStaleReaders() == 0)
      #expect(try reader.get(db, key: "k") == bytes("v"))
    }
  }

  @Test("copy(to:) produces an environment that reads the same data", arguments: [false, true])
  func copy(compact: Bool) throws {
    try withTemporaryDirectory { dir in
      let source = dir + "/source"
      let target = dir + "/target"
      try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: false)
      try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: false)
      let (env, db) = try openEnvironment(in: source)
      try env.write { txn throws(LMDBError) in
        for i in 0..<500 as Range<UInt64> {
          try txn.put(db, key: BigEndianKey(i), value: bytes("value \(i)"))
        }
      }
      // Deleted entries leave free pages behind, which a compacting copy drops.
      try env.write { txn throws(LMDBError) in
        for i in stride(from: 0, to: 500, by: 2) as StrideTo<UInt64> { try txn.delete(db, key: BigEndianKey(i)) }
      }
      try env.copy(to: target, compact: compact)

      let copy = try Environment(path: target, options: .init(flags: [.readOnly]))
      let copied = try #require(try copy.openDatabase("test", create: false))
      let original = try env.read { txn throws in try dump(txn, db) }
      let duplicate = try copy.read { txn throws in try dump(txn, copied) }
      #expect(original.count == 250)
      #expect(duplicate == original)
    }
  }

  @Test("copy(to:) into a missing directory throws noSuchFile")
  func copyToMissingDirectory() throws {
    try withTemporaryDirectory { dir in
      let (env, _) = try openEnvironment(in: dir)
      #expect(throws: LMDBError.noSuchFile) { try env.copy(to: dir + "/missing") }
    }
  }

  @Test("sync succeeds on an environment opened with noSync")
  func sync() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir, options: .init(flags: [.noSync]))
      try env.write { txn throws(LMDBError) in _ = try txn.put(db, key: "k", value: bytes("v")) }
      try env.sync()
      let reopened = try Environment(path: dir)
      let again = try #require(try reopened.openDatabase("test", create: false))
      #expect(try reopened.read { txn throws in try txn.get(again, key: "k") } == bytes("v"))
    }
  }

  @Test("info reports the configured map size and reader table")
  func info() throws {
    try withTemporaryDirectory { dir in
      let env = try Environment(path: dir, options: .init(mapSize: 8 << 20, maxReaders: 50))
      let info = env.info
      #expect(info.mapSize == 8 << 20)
      #expect(info.maxReaders == 50)
      #expect(info.pageSize >= 4096)
      #expect(info.pageSize.nonzeroBitCount == 1)
      #expect(env.maxKeySize == 511)
      #expect(env.path == dir)
    }
  }

  @Test("setMapSize and grow enlarge the map and never shrink it")
  func explicitGrowth() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir, options: .init(mapSize: 1 << 20))
      try env.setMapSize(4 << 20)
      #expect(env.info.mapSize == 4 << 20)
      try env.grow()
      #expect(env.info.mapSize == 8 << 20)
      // "At least": asking for less keeps the larger map.
      try env.setMapSize(2 << 20)
      #expect(env.info.mapSize == 8 << 20)
      try env.write { txn throws(LMDBError) in _ = try txn.put(db, key: "k", value: bytes("v")) }
      #expect(try env.read { txn throws in try txn.get(db, key: "k") } == bytes("v"))
    }
  }
}

/// One key and its value, copied out of the map.
struct Entry: Equatable, CustomStringConvertible {
  var key: [UInt8]
  var value: [UInt8]
  var description: String { "\(key): \(value)" }
}

/// Every entry of `db`, copied, in key order.
func dump(_ txn: borrowing some TransactionReading & ~Copyable, _ db: Database) throws -> [Entry] {
  var entries: [Entry] = []
  try txn.forEach(db) { key, value in
    entries.append(Entry(key: [UInt8](key), value: [UInt8](value)))
    return true
  }
  return entries
}
