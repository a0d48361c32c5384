import Foundation
import TestSupport
import Testing

@testable import LMDB

@Suite("Entry checksums: the inline CRC-32C and the reserved-space put")
struct ChecksumTests {
  @Test("the inline CRC-32C equals ISA-L's for every length up to past the short limit, in any split")
  func inlineEqualsLibrary() {
    var g = SeededGenerator(seed: 31)
    for length in 0...(EntryChecksum.shortLength + 80) {
      let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &g) }
      let split = length == 0 ? 0 : Int.random(in: 0...length, using: &g)
      bytes.withUnsafeBytes { all in
        let key = UnsafeRawBufferPointer(rebasing: all[..<split])
        let value = UnsafeRawBufferPointer(rebasing: all[split...])
        #expect(EntryChecksum.of(key, value) == EntryChecksum.ofByLibrary(key, value), "length \(length) at \(split)")
      }
    }
  }

  @Test("the checksum of '123456789' is CRC-32C's check value")
  func checkValue() {
    let text = Array("123456789".utf8)
    let crc = text.withUnsafeBytes { EntryChecksum.of($0, UnsafeRawBufferPointer(start: nil, count: 0)) }
    #expect(crc == 0xE306_9283)
  }

  @Test("puts into a checksummed database read back, through the transaction and a cursor, appended or not")
  func reservedPutsReadBack() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir, flags: .checksummed)
      var g = SeededGenerator(seed: 7)
      var expected: [UInt64: [UInt8]] = [:]
      try env.write { txn throws in
        for i in UInt64(0)..<600 {
          let value = (0..<Int.random(in: 0...700, using: &g)).map { _ in UInt8.random(in: 0...255, using: &g) }
          expected[i] = value
          let key = BigEndianKey(i)
          switch i % 3 {
          case 0: #expect(try txn.appendOrPut(db, key: key, value: value))
          case 1: #expect(try txn.put(db, key: key, value: value, flags: .noOverwrite))
          default: try txn.withCursor(db) { cursor throws in try cursor.put(key: key, value: value) }
          }
        }
        // A refused put changes nothing, and writes nothing into the existing value.
        #expect(try !txn.put(db, key: BigEndianKey(1), value: [1, 2, 3], flags: .noOverwrite))
      }
      try env.read { txn throws in
        for (i, value) in expected { #expect(try txn.get(db, key: BigEndianKey(i)) == value, "key \(i)") }
      }
    }
  }

  @Test("a value read from the map and put under another key in the same transaction is stored whole")
  func valueFromTheMap() throws {
    try withTemporaryDirectory { dir in
      let (env, db) = try openEnvironment(in: dir, flags: .checksummed)
      func value(_ i: UInt64) -> [UInt8] { (0..<300).map { UInt8(truncatingIfNeeded: UInt64($0) &* 7 &+ i &* 13) } }
      try env.write { txn throws in
        for i in UInt64(0)..<200 { _ = try txn.put(db, key: BigEndianKey(i * 2), value: value(i * 2)) }
        // Each copy lands beside the entry it is read from, on a page the put changes or
        // splits: every value differs, so a copy taken after the change would show it.
        for i in UInt64(0)..<200 {
          try txn.withValue(db, key: BigEndianKey(i * 2)) { stored throws in
            _ = try txn.put(db, key: BigEndianKey(i * 2 + 1), value: MapBytes(bytes: stored))
          }
        }
      }
      try env.read { txn throws in
        for i in UInt64(0)..<400 {
          #expect(try txn.get(db, key: BigEndianKey(i)) == value(i & ~1), "key \(i)")
        }
      }
    }
  }
}

/// A value handed to LMDB as it lies in the map, as a caller's own `LMDBBytes` type may.
private struct MapBytes: LMDBBytes {
  let bytes: UnsafeRawBufferPointer
  func withLMDBBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R { try body(bytes) }
}
