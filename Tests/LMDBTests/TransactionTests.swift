import Foundation
import LMDB
import Testing

@Suite("Transactions: reads and writes")
struct ReadWriteTests {
  @Test("put stores a value that get returns, in the same transaction and after commit")
  func putGet() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      try env.write { txn throws in
        #expect(try txn.put(db, key: "alpha", value: bytes("one")))
        #expect(try txn.get(db, key: "alpha") == bytes("one"))
      }
      try env.read { txn throws in
        #expect(try txn.get(db, key: "alpha") == bytes("one"))
        #expect(try txn.contains(db, key: "alpha"))
        #expect(try txn.get(db, key: "beta") == nil)
        #expect(try !txn.contains(db, key: "beta"))
      }
    }
  }

  @Test("put without flags replaces the value")
  func overwrite() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      try env.write { txn throws(LMDBError) in _ = try txn.put(db, key: "k", value: bytes("first")) }
      try env.write { txn throws(LMDBError) in _ = try txn.put(db, key: "k", value: bytes("second, longer")) }
      #expect(try env.read { txn throws in try txn.get(db, key: "k") } == bytes("second, longer"))
    }
  }

  @Test("keys of every LMDBBytes kind address the same entry")
  func keyKinds() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      let array: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 42]
      try env.write { txn throws(LMDBError) in _ = try txn.put(db, key: BigEndianKey(42), value: "answer") }
      try env.read { txn throws in
        #expect(try txn.get(db, key: array) == bytes("answer"))
        #expect(try txn.get(db, key: ([9] + array)[1...]) == bytes("answer"))
        #expect(try txn.get(db, key: "\0\0\0\0\0\0\0*") == bytes("answer"))
      }
    }
  }

  @Test("empty values and binary values round-trip")
  func emptyAndBinaryValues() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      let binary = (0...255).map { UInt8($0) }
      try env.write { txn throws(LMDBError) in
        try txn.put(db, key: "empty", value: [UInt8]())
        try txn.put(db, key: "binary", value: binary)
      }
      try env.read { txn throws in
        #expect(try txn.get(db, key: "empty") == [])
        #expect(try txn.contains(db, key: "empty"))
        #expect(try txn.get(db, key: "binary") == binary)
      }
    }
  }

  @Test("a value larger than a page round-trips through overflow pages")
  func largeValue() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      let big = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
      try env.write { txn throws(LMDBError) in _ = try txn.put(db, key: "big", value: big) }
      try env.read { txn throws in
        #expect(try txn.get(db, key: "big") == big)
        #expect(try txn.statistics(db).overflowPages > 0)
      }
    }
  }

  @Test("withValue reads in place and returns nil for a missing key")
  func withValue() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      try env.write { txn throws(LMDBError) in _ = try txn.put(db, key: "k", value: [1, 2, 3, 4]) }
      try env.read { txn throws in
        let sum = try txn.withValue(db, key: "k") { buffer in buffer.reduce(0) { $0 + Int($1) } }
        #expect(sum == 10)
        var called = false
        let missing = try txn.withValue(db, key: "nope") { _ in
          called = true
          return 1
        }
        #expect(missing == nil)
        #expect(!called)
      }
    }
  }

  @Test("delete removes a key and reports whether it was there")
  func delete() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      try env.write { txn throws(LMDBError) in
        try txn.put(db, key: "a", value: bytes("1"))
        try txn.put(db, key: "b", value: bytes("2"))
      }
      try env.write { txn throws in
        #expect(try txn.delete(db, key: "a"))
        #expect(try !txn.delete(db, key: "a"))
        #expect(try !txn.delete(db, key: "never"))
        #expect(try txn.get(db, key: "a") == nil)
      }
      try env.read { txn throws in
        #expect(try txn.get(db, key: "a") == nil)
        #expect(try txn.get(db, key: "b") == bytes("2"))
      }
    }
  }

  @Test("noOverwrite returns false for an existing key and keeps its value")
  func noOverwrite() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      try env.write { txn throws in
        #expect(try txn.put(db, key: "k", value: bytes("first"), flags: .noOverwrite))
        #expect(try !txn.put(db, key: "k", value: bytes("second"), flags: .noOverwrite))
      }
      #expect(try env.read { txn throws in try txn.get(db, key: "k") } == bytes("first"))
    }
  }

  @Test("append accepts keys in order and throws keyExists for one out of order")
  func appendOutOfOrder() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      try env.write { txn throws(LMDBError) in
        for i in [1, 2, 5, 9] as [UInt64] {
          try txn.put(db, key: BigEndianKey(i), value: bytes("\(i)"), flags: .append)
        }
      }
      try env.write { txn throws in
        let error = #expect(throws: LMDBError.self) {
          try txn.put(db, key: BigEndianKey(3), value: bytes("3"), flags: .append)
        }
        #expect(error == .keyExists)
        #expect(try txn.get(db, key: BigEndianKey(3)) == nil)
      }
      try env.read { txn throws in
        #expect(try txn.statistics(db).entries == 4)
        #expect(try txn.get(db, key: BigEndianKey(9)) == bytes("9"))
      }
    }
  }

  @Test("appendOrPut appends keys past the end and puts the others, keeping every key in order")
  func appendOrPut() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      // Past the end, in the middle, before the start, over an existing key, past the end again.
      let keys: [UInt64] = [10, 20, 15, 5, 20, 30]
      try env.write { txn throws in
        for k in keys { try txn.appendOrPut(db, key: BigEndianKey(k), value: bytes("v\(k)")) }
        #expect(try !txn.appendOrPut(db, key: BigEndianKey(15), value: bytes("again"), flags: .noOverwrite))
        #expect(try txn.appendOrPut(db, key: BigEndianKey(40), value: bytes("v40"), flags: .noOverwrite))
      }
      try env.read { txn throws in
        var seen: [UInt64] = []
        try txn.forEach(db) { k, v in
          let key = BigEndianKey.decode(k) ?? 0
          #expect(Array(v) == bytes("v\(key)"))
          seen.append(key)
          return true
        }
        #expect(seen == [5, 10, 15, 20, 30, 40])
      }
    }
  }

  @Test("put(reserving:) lets the caller write the value in place")
  func reserve() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      try env.write { txn throws(LMDBError) in
        try txn.put(db, key: "r", reserving: 16) { buffer in
          #expect(buffer.count == 16)
          for i in buffer.indices { buffer[i] = UInt8(i * 3) }
        }
        try txn.put(db, key: "big", reserving: 10_000) { buffer in
          #expect(buffer.count == 10_000)
          buffer.initializeMemory(as: UInt8.self, repeating: 0xAB)
        }
      }
      try env.read { txn throws in
        #expect(try txn.get(db, key: "r") == (0..<16).map { UInt8($0 * 3) })
        #expect(try txn.get(db, key: "big") == [UInt8](repeating: 0xAB, count: 10_000))
      }
    }
  }

  @Test("a key longer than maxKeySize throws badValueSize")
  func keyTooLong() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      let long = [UInt8](repeating: 7, count: env.maxKeySize + 1)
      try env.write { txn throws in
        #expect(throws: LMDBError.badValueSize) { try txn.put(db, key: long, value: bytes("v")) }
        #expect(try txn.put(db, key: Array(long.dropLast()), value: bytes("v")))
      }
    }
  }

  @Test("empty removes every entry and keeps the database usable")
  func empty() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      let other = try #require(try env.openDatabase("other"))
      try env.write { txn throws(LMDBError) in
        for i in 0..<100 as Range<UInt64> { try txn.put(db, key: BigEndianKey(i), value: bytes("\(i)")) }
        try txn.put(other, key: "k", value: bytes("untouched"))
      }
      try env.write { txn throws(LMDBError) in try txn.empty(db) }
      try env.read { txn throws in
        #expect(try txn.statistics(db).entries == 0)
        #expect(try txn.get(db, key: BigEndianKey(5)) == nil)
        #expect(try txn.get(other, key: "k") == bytes("untouched"))
      }
      try env.write { txn throws(LMDBError) in _ = try txn.put(db, key: "again", value: bytes("yes")) }
      #expect(try env.read { txn throws in try txn.get(db, key: "again") } == bytes("yes"))
    }
  }

  @Test("statistics count entries and pages")
  func statistics() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      let before = try env.read { txn throws in try txn.statistics(db) }
      #expect(before.entries == 0)
      #expect(before.depth == 0)
      try env.write { txn throws(LMDBError) in
        for i in 0..<1000 as Range<UInt64> { try txn.put(db, key: BigEndianKey(i), value: bytes("value \(i)")) }
      }
      let after = try env.read { txn throws in try txn.statistics(db) }
      #expect(after.entries == 1000)
      #expect(after.depth >= 2)
      #expect(after.leafPages > 1)
      #expect(after.branchPages >= 1)
      #expect(after.overflowPages == 0)
      #expect(after.pageSize == env.info.pageSize)
    }
  }

  @Test("a duplicate-sorted database keeps several values per key")
  func duplicateSort() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir, flags: .duplicateSort)
      try env.write { txn throws in
        #expect(try txn.put(db, key: "k", value: bytes("b")))
        #expect(try txn.put(db, key: "k", value: bytes("a")))
        #expect(try !txn.put(db, key: "k", value: bytes("a"), flags: .noDuplicateData))
      }
      try env.read { txn throws in
        #expect(try txn.statistics(db).entries == 2)
        // get returns the first value in sort order.
        #expect(try txn.get(db, key: "k") == bytes("a"))
      }
      try env.write { txn throws in #expect(try txn.delete(db, key: "k")) }
      #expect(try env.read { txn throws in try txn.statistics(db).entries } == 0)
    }
  }
}

@Suite("Transactions: isolation and atomicity")
struct IsolationTests {
  @Test("a read begun before a write does not see it; a read begun after does")
  func snapshotIsolation() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      try env.write { txn throws(LMDBError) in _ = try txn.put(db, key: "k", value: bytes("old")) }

      let before = try env.beginRead()
      try env.write { txn throws(LMDBError) in
        try txn.put(db, key: "k", value: bytes("new"))
        try txn.put(db, key: "added", value: bytes("x"))
      }
      let after = try env.beginRead()

      #expect(try before.get(db, key: "k") == bytes("old"))
      #expect(try before.get(db, key: "added") == nil)
      #expect(try before.statistics(db).entries == 1)
      #expect(try after.get(db, key: "k") == bytes("new"))
      #expect(try after.get(db, key: "added") == bytes("x"))
      #expect(try after.statistics(db).entries == 2)
    }
  }

  @Test("a write transaction sees its own uncommitted changes; readers don't")
  func uncommittedInvisible() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      try env.write { txn throws in
        try txn.put(db, key: "k", value: bytes("pending"))
        #expect(try txn.get(db, key: "k") == bytes("pending"))
        let reader = try env.beginRead()
        #expect(try reader.get(db, key: "k") == nil)
      }
      #expect(try env.read { txn throws in try txn.get(db, key: "k") } == bytes("pending"))
    }
  }

  @Test("a write whose body throws is aborted: nothing lands")
  func abortOnThrow() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      try env.write { txn throws(LMDBError) in _ = try txn.put(db, key: "kept", value: bytes("1")) }
      #expect(throws: Boom.self) {
        try env.write { txn throws in
          try txn.put(db, key: "lost", value: bytes("2"))
          try txn.put(db, key: "kept", value: bytes("changed"))
          try txn.delete(db, key: "kept")
          throw Boom()
        }
      }
      try env.read { txn throws in
        #expect(try txn.get(db, key: "lost") == nil)
        #expect(try txn.get(db, key: "kept") == bytes("1"))
      }
      // The writer lock was released: the next write goes through.
      try env.write { txn throws(LMDBError) in _ = try txn.put(db, key: "after", value: bytes("3")) }
      #expect(try env.read { txn throws in try txn.get(db, key: "after") } == bytes("3"))
    }
  }

  @Test("write returns the body's result")
  func writeResult() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      let count = try env.write { txn throws in
        for i in 0..<7 as Range<UInt64> { try txn.put(db, key: BigEndianKey(i), value: [UInt8]()) }
        return try txn.statistics(db).entries
      }
      #expect(count == 7)
    }
  }

  @Test("a write transaction dropped without commit is aborted; abort() discards too")
  func explicitTransactions() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      do {
        let txn = try env.beginWrite()
        try txn.put(db, key: "dropped", value: bytes("x"))
      }
      do {
        let txn = try env.beginWrite()
        try txn.put(db, key: "aborted", value: bytes("x"))
        txn.abort()
      }
      do {
        let txn = try env.beginWrite()
        try txn.put(db, key: "committed", value: bytes("x"))
        try txn.commit()
      }
      try env.read { txn throws in
        #expect(try txn.get(db, key: "dropped") == nil)
        #expect(try txn.get(db, key: "aborted") == nil)
        #expect(try txn.get(db, key: "committed") == bytes("x"))
      }
    }
  }

  @Test("a throwing nested transaction is rolled back alone; the parent commits the rest")
  func nestedRollback() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      try env.write { txn throws(LMDBError) in _ = try txn.put(db, key: "existing", value: bytes("0")) }
      try env.write { txn throws in
        try txn.put(db, key: "parent", value: bytes("1"))
        #expect(throws: Boom.self) {
          try txn.nested { child throws in
            try child.put(db, key: "failed child", value: bytes("2"))
            try child.delete(db, key: "existing")
            #expect(try child.get(db, key: "parent") == bytes("1"))
            throw Boom()
          }
        }
        #expect(try txn.get(db, key: "failed child") == nil)
        #expect(try txn.get(db, key: "existing") == bytes("0"))
        let value = try txn.nested { child throws in
          try child.put(db, key: "good child", value: bytes("3"))
          return 42
        }
        #expect(value == 42)
        #expect(try txn.get(db, key: "good child") == bytes("3"))
      }
      try env.read { txn throws in
        #expect(try txn.get(db, key: "parent") == bytes("1"))
        #expect(try txn.get(db, key: "good child") == bytes("3"))
        #expect(try txn.get(db, key: "existing") == bytes("0"))
        #expect(try txn.get(db, key: "failed child") == nil)
      }
    }
  }

  @Test("a nested transaction's changes are lost when the parent aborts")
  func nestedThenParentAborts() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      #expect(throws: Boom.self) {
        try env.write { txn throws in
          try txn.nested { child throws in _ = try child.put(db, key: "child", value: bytes("1")) }
          #expect(try txn.get(db, key: "child") == bytes("1"))
          throw Boom()
        }
      }
      #expect(try env.read { txn throws in try txn.get(db, key: "child") } == nil)
    }
  }

  @Test("transactions nest several levels deep")
  func deepNesting() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      try env.write { txn throws in
        try txn.nested { one throws in
          try one.put(db, key: "1", value: bytes("one"))
          try one.nested { two throws in
            try two.put(db, key: "2", value: bytes("two"))
            _ = try? two.nested { three throws in
              try three.put(db, key: "3", value: bytes("three"))
              throw Boom()
            }
          }
        }
      }
      try env.read { txn throws in
        #expect(try txn.get(db, key: "1") == bytes("one"))
        #expect(try txn.get(db, key: "2") == bytes("two"))
        #expect(try txn.get(db, key: "3") == nil)
      }
    }
  }

  @Test("a transaction kept by an object of another module is read through it")
  func ownedByAnObject() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      _ = try env.write { txn throws in try txn.put(db, key: "k", value: bytes("before")) }
      let owner = Owner(try env.beginRead())
      _ = try env.write { txn throws in try txn.put(db, key: "k", value: bytes("after")) }
      #expect(try owner.get(db, key: "k") == bytes("before"))
      #expect(try owner.withCursor(db) { c in try c.first() ? try c.value() : [] } == bytes("before"))
    }
  }
}

/// What a module above LMDB does to share a transaction between objects: it owns the
/// `~Copyable` transaction and lends its access, never a copy of the C handle.
private final class Owner: TransactionReading {
  let reader: ReadTransaction

  init(_ reader: consuming ReadTransaction) { self.reader = reader }

  func withAccess<R: ~Copyable>(_ body: (borrowing TransactionAccess) throws(LMDBError) -> R) throws(LMDBError)
    -> R
  { try reader.withAccess(body) }
}

@Suite("Transaction IDs")
struct TransactionIDTests {
  @Test("a write transaction's ID follows the last commit's; an abort and an empty commit use none")
  func followsCommits() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir)
      let first = try env.write { txn throws(LMDBError) in
        _ = try txn.put(db, key: "k", value: bytes("1"))
        return txn.transactionID
      }
      #expect(try env.beginWrite().transactionID == first + 1)  // dropped: aborted
      #expect(throws: Boom.self) {
        try env.write { txn throws in
          _ = try txn.put(db, key: "k", value: bytes("2"))
          throw Boom()
        }
      }
      let empty = try env.write { txn throws(LMDBError) in txn.transactionID }
      #expect(empty == first + 1)
      let second = try env.write { txn throws(LMDBError) in
        _ = try txn.put(db, key: "k", value: bytes("3"))
        return txn.transactionID
      }
      #expect(second == first + 1)
      #expect(try env.beginWrite().transactionID == second + 1)
    }
  }
}
