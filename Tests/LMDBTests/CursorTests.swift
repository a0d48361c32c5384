import Foundation
import LMDB
import TestSupport
import Testing

@Suite("Cursor")
struct CursorTests {
  /// Keys 10, 20, …, 100 with values "v10", "v20", ….
  static func fill(_ env: Environment, _ db: Database) throws {
    try env.write { txn throws(LMDBError) in
      for i in stride(from: 10, through: 100, by: 10) as StrideThrough<UInt64> {
        try txn.put(db, key: BigEndianKey(i), value: bytes("v\(i)"))
      }
    }
  }

  /// The current key of `cursor`, decoded.
  static func key(_ cursor: borrowing Cursor) throws -> UInt64? {
    try cursor.withCurrent { key, _ in BigEndianKey.decode(key) }
  }

  @Test("every move on an empty database reports no entry")
  func emptyDatabase() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      try env.read { txn throws in
        try txn.withCursor(db) { cursor throws in
          #expect(try !cursor.first())
          #expect(try !cursor.last())
          #expect(try !cursor.next())
          #expect(try !cursor.previous())
          #expect(try !cursor.seek(BigEndianKey(0)))
          #expect(try !cursor.find(BigEndianKey(0)))
          #expect(throws: (any Error).self) { try cursor.key() }
        }
      }
    }
  }

  @Test("first, next, last and previous walk the keys in order")
  func walk() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      try Self.fill(env, db)
      try env.read { txn throws in
        try txn.withCursor(db) { cursor throws in
          var forward: [UInt64] = []
          var more = try cursor.first()
          while more {
            forward.append(try #require(try Self.key(cursor)))
            more = try cursor.next()
          }
          #expect(forward == Array(stride(from: 10, through: 100, by: 10)))
          // Walking off the end leaves no next entry.
          #expect(try !cursor.next())

          var backward: [UInt64] = []
          more = try cursor.last()
          while more {
            backward.append(try #require(try Self.key(cursor)))
            more = try cursor.previous()
          }
          #expect(backward == Array(stride(from: 100, through: 10, by: -10)))

          #expect(try cursor.first())
          #expect(try cursor.value() == bytes("v10"))
          #expect(try cursor.last())
          #expect(try cursor.key() == [0, 0, 0, 0, 0, 0, 0, 100])
          #expect(try cursor.value() == bytes("v100"))
        }
      }
    }
  }

  @Test("seek stops at the first key at or after the target")
  func seek() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      try Self.fill(env, db)
      try env.read { txn throws in
        try txn.withCursor(db) { cursor throws in
          #expect(try cursor.seek(BigEndianKey(35)))
          #expect(try Self.key(cursor) == 40)
          #expect(try cursor.value() == bytes("v40"))
          #expect(try cursor.seek(BigEndianKey(50)))
          #expect(try Self.key(cursor) == 50)
          #expect(try cursor.seek(BigEndianKey(0)))
          #expect(try Self.key(cursor) == 10)
          #expect(try !cursor.seek(BigEndianKey(101)))
          // After seek the cursor moves on from where it stopped.
          #expect(try cursor.seek(BigEndianKey(61)))
          #expect(try cursor.next())
          #expect(try Self.key(cursor) == 80)
          #expect(try cursor.previous())
          #expect(try cursor.previous())
          #expect(try Self.key(cursor) == 60)
        }
      }
    }
  }

  @Test("seek with an empty key stops at the first entry")
  func seekEmptyKey() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      try env.read { txn throws in
        try txn.withCursor(db) { cursor throws in
          #expect(try !cursor.seek([UInt8]()))
        }
      }
      try Self.fill(env, db)
      try env.read { txn throws in
        try txn.withCursor(db) { cursor throws in
          #expect(try cursor.seek([UInt8]()))
          #expect(try Self.key(cursor) == 10)
          var keys: [UInt64] = []
          try txn.forEach(db, from: "") { key, _ in
            keys.append(BigEndianKey.decode(key) ?? 0)
            return true
          }
          #expect(keys.count == 10)
        }
      }
    }
  }

  @Test("find stops only on the exact key")
  func find() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      try Self.fill(env, db)
      try env.read { txn throws in
        try txn.withCursor(db) { cursor throws in
          #expect(try cursor.find(BigEndianKey(70)))
          #expect(try Self.key(cursor) == 70)
          #expect(try cursor.value() == bytes("v70"))
          #expect(try !cursor.find(BigEndianKey(75)))
          #expect(try !cursor.find(BigEndianKey(5)))
          #expect(try cursor.find(BigEndianKey(10)))
          #expect(try cursor.next())
          #expect(try Self.key(cursor) == 20)
        }
      }
    }
  }

  @Test("forEach visits every entry, or the entries from a key, until told to stop")
  func forEach() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      try Self.fill(env, db)
      try env.read { txn throws in
        var all: [UInt64] = []
        try txn.forEach(db) { key, value in
          let k = try #require(BigEndianKey.decode(key))
          #expect([UInt8](value) == bytes("v\(k)"))
          all.append(k)
          return true
        }
        #expect(all == Array(stride(from: 10, through: 100, by: 10)))

        var fromKey: [UInt64] = []
        try txn.forEach(db, from: BigEndianKey(45)) { key, _ in
          fromKey.append(BigEndianKey.decode(key) ?? 0)
          return true
        }
        #expect(fromKey == [50, 60, 70, 80, 90, 100])

        var stopped: [UInt64] = []
        try txn.forEach(db, from: BigEndianKey(20)) { key, _ in
          stopped.append(BigEndianKey.decode(key) ?? 0)
          return stopped.count < 3
        }
        #expect(stopped == [20, 30, 40])

        var none = 0
        try txn.forEach(db, from: BigEndianKey(1000)) { _, _ in
          none += 1
          return true
        }
        #expect(none == 0)
      }
    }
  }

  @Test("forEach passes on what the body throws")
  func forEachThrows() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      try Self.fill(env, db)
      try env.read { txn throws in
        var visited = 0
        #expect(throws: Boom.self) {
          try txn.forEach(db) { _, _ in
            visited += 1
            if visited == 2 { throw Boom() }
            return true
          }
        }
        #expect(visited == 2)
      }
    }
  }

  @Test("deleteCurrent removes the entry under the cursor, and the walk goes on")
  func deleteCurrent() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      try Self.fill(env, db)
      // Delete a run of neighbours during one walk: after a delete, `next` must land on the
      // entry that followed the deleted one, not skip it.
      try env.write { txn throws in
        try txn.withCursor(db) { cursor throws in
          var more = try cursor.seek(BigEndianKey(30))
          while more, let key = try Self.key(cursor), key <= 70 {
            try cursor.deleteCurrent()
            more = try cursor.next()
          }
          #expect(try txn.statistics(db).entries == 5)
        }
      }
      let left = try env.read { txn throws in try dump(txn, db).compactMap { BigEndianKey.decode($0.key) } }
      #expect(left == [10, 20, 80, 90, 100])
    }
  }

  @Test("deleteCurrent of the only entry leaves the database empty")
  func deleteOnly() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      try env.write { txn throws(LMDBError) in _ = try txn.put(db, key: "only", value: bytes("1")) }
      try env.write { txn throws in
        try txn.withCursor(db) { cursor throws in
          #expect(try cursor.find("only"))
          try cursor.deleteCurrent()
          #expect(try !cursor.first())
        }
      }
      #expect(try env.read { txn throws in try txn.statistics(db).entries } == 0)
    }
  }

  @Test("deleteCurrent in a read transaction throws instead of deleting")
  func deleteInReadTransaction() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      try Self.fill(env, db)
      try env.read { txn throws in
        try txn.withCursor(db) { cursor throws in
          #expect(try cursor.first())
          let error = #expect(throws: LMDBError.self) { try cursor.deleteCurrent() }
          #expect(error?.code == 13)  // EACCES
        }
      }
      #expect(try env.read { txn throws in try txn.statistics(db).entries } == 10)
    }
  }
}

@Suite("BigEndianKey")
struct BigEndianKeyTests {
  @Test("keys sort numerically, not by their lowest byte")
  func numericOrder() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      var generator = SeededGenerator(seed: 7)
      var values: Set<UInt64> = [0, 1, 255, 256, 257, 65_535, 65_536, 1 << 32, UInt64.max - 1, UInt64.max]
      while values.count < 300 {
        // Mix magnitudes so that keys differ in high and in low bytes.
        values.insert(generator.next() >> UInt64.random(in: 0..<64, using: &generator))
      }
      try env.write { txn throws(LMDBError) in
        for v in values.shuffled(using: &generator) { try txn.put(db, key: BigEndianKey(v), value: [UInt8]()) }
      }
      let order = try env.read { txn throws in try dump(txn, db).map { try #require(BigEndianKey.decode($0.key)) } }
      #expect(order == values.sorted())
    }
  }

  @Test("encoding is 8 big-endian bytes and decode inverts it", arguments: [0, 1, 0x0102_0304_0506_0708, UInt64.max])
  func roundTrip(value: UInt64) {
    let encoded = BigEndianKey(value).withLMDBBytes { [UInt8]($0) }
    #expect(encoded.count == 8)
    #expect(encoded == (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) })
    #expect(encoded.withUnsafeBytes { BigEndianKey.decode($0) } == value)
  }

  @Test("decode rejects anything but exactly 8 bytes", arguments: [0, 1, 7, 9, 16])
  func decodeWrongLength(count: Int) {
    let buffer = [UInt8](repeating: 1, count: count)
    #expect(buffer.withUnsafeBytes { BigEndianKey.decode($0) } == nil)
  }

  @Test("decode reads from an unaligned buffer")
  func unaligned() {
    let buffer: [UInt8] = [0xFF, 0, 0, 0, 0, 0, 0, 1, 2]
    let decoded = buffer.withUnsafeBytes { BigEndianKey.decode(UnsafeRawBufferPointer(rebasing: $0[1..<9])) }
    #expect(decoded == 0x0102)
  }
}
