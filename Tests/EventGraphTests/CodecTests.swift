import Foundation
import LMDB
import TestSupport
import Testing

@testable import EventGraph

@Suite("The binary codec")
struct CodecTests {
  static func randomValue(_ g: inout SeededGenerator) -> Value? {
    switch g.next() % 14 {
    case 0: return nil
    case 1: return .string(String((0..<Int(g.next() % 40)).map { _ in "aé桃🍑 x".randomElement(using: &g) ?? "a" }))
    case 2: return .int16(Int16(truncatingIfNeeded: g.next()))
    case 3: return .int32(Int32(truncatingIfNeeded: g.next()))
    case 4: return .int64(Int64(bitPattern: g.next()))
    case 5: return .double(Double(bitPattern: g.next() & 0x7FEF_FFFF_FFFF_FFFF))
    case 6: return .float(Float(Int32(truncatingIfNeeded: g.next())) / 7)
    case 7: return .decimal(Decimal(Int64(truncatingIfNeeded: g.next() % 1_000_000)) / 100)
    case 8: return .boolean(g.next() & 1 == 0)
    case 9: return .date(Date(timeIntervalSince1970: Double(Int64(truncatingIfNeeded: g.next() % 4_000_000_000))))
    case 10: return .binary((0..<Int(g.next() % 64)).map { _ in UInt8(truncatingIfNeeded: g.next()) })
    case 11: return .uuid(UUID())
    case 12: return .uri("https://example.com/\(g.next())")
    default: return .string("")
    }
  }

  static func randomCommit(_ g: inout SeededGenerator) -> Commit {
    var events: [Event] = []
    for _ in 0..<Int(g.next() % 30) {
      let o = ObjectID(g.next() % 1_000_000 + 1)
      let p = PropertyID(rawValue: UInt16(g.next() % 300))
      switch g.next() % 5 {
      case 0: events.append(.insert(o, entity: EntityID(rawValue: UInt16(g.next() % 100))))
      case 1: events.append(.set(o, attribute: p, value: randomValue(&g)))
      case 2:
        events.append(
          .link(
            o, relationship: p, target: ObjectID(g.next() % 9999 + 1),
            position: g.next() % 2 == 0 ? nil : Int(g.next() % 500)))
      case 3: events.append(.unlink(o, relationship: p, target: ObjectID(g.next() % 9999 + 1)))
      default: events.append(.delete(o))
      }
    }
    var meta = CommitMetadata()
    if g.next() % 2 == 0 { meta.author = "author\(g.next() % 10)" }
    if g.next() % 3 == 0 { meta.idempotencyKey = "key-\(g.next())" }
    if g.next() % 4 == 0 { meta.sourceCommit = g.next() % 1000 }
    if g.next() % 5 == 0 { meta.extra = ["a": "1", "b": "桃"] }
    let ms = Double(g.next() % 4_000_000_000_000)
    return Commit(
      number: g.next() % 100_000 + 1, firstSequence: g.next() % 1_000_000 + 1,
      time: Date(timeIntervalSince1970: ms / 1000),
      modelVersion: Int(g.next() % 9) + 1, metadata: meta, events: events)
  }

  @Test("encode then decode gives the same commit, for random commits")
  func roundTrip() throws {
    var g = SeededGenerator(seed: 11)
    for _ in 0..<2000 {
      let c = Self.randomCommit(&g)
      let bytes = CommitCodec.encode(c)
      let back = try bytes.withUnsafeBytes { try CommitCodec.decode($0, context: "test") }
      #expect(back == c)
      #expect(CommitCodec.encode(back) == bytes)  // one encoding per commit
    }
  }

  @Test("every single-bit flip is caught by the checksum")
  func bitFlips() throws {
    var g = SeededGenerator(seed: 12)
    let bytes = CommitCodec.encode(Self.randomCommit(&g))
    for i in 0..<bytes.count {
      for bit in 0..<8 {
        var damaged = bytes
        damaged[i] ^= 1 << bit
        #expect(throws: CorruptionError.self) {
          try damaged.withUnsafeBytes { try CommitCodec.decode($0, context: "x") }
        }
      }
    }
  }

  @Test("random bytes never trap the decoder, with or without the checksum")
  func fuzz() {
    var g = SeededGenerator(seed: 13)
    for _ in 0..<(20_000 * stressFactor) {
      var bytes = (0..<Int(g.next() % 80)).map { _ in UInt8(truncatingIfNeeded: g.next()) }
      if g.next() % 2 == 0, !bytes.isEmpty { bytes[0] = 1 }  // get past the format byte sometimes
      _ = try? bytes.withUnsafeBytes { try CommitCodec.decode($0, context: "fuzz", verifyChecksum: false) }
      _ = try? bytes.withUnsafeBytes { try ObjectState.decode($0, id: ObjectID(1), model: try Fixtures.company()) }
    }
    // Truncations of a valid record fail cleanly too.
    let valid = CommitCodec.encode(Self.randomCommit(&g))
    for n in 0..<valid.count {
      #expect(throws: CorruptionError.self) {
        try Array(valid[..<n]).withUnsafeBytes { try CommitCodec.decode($0, context: "cut", verifyChecksum: false) }
      }
    }
  }

  @Test("an object record is laid out as the store layout says, a count of 128 values or more taking two bytes")
  func objectRecordLayout() throws {
    for count in [0, 1, 127, 128, 130] {
      let attributes = (0..<130).map { AttributeDescription(name: "a\($0)", type: .string, isOptional: true) }
      let model = try Model(
        name: "Wide", version: 1, entities: [EntityDescription(name: "Wide", attributes: attributes)])
      var state = ObjectState(id: ObjectID(7), entity: EntityID(rawValue: 0), propertyCount: 130)
      for i in 0..<count { state.set(PropertyID(rawValue: UInt16(i)), .string("é\(i)")) }

      var expected = BinaryWriter()
      expected.varint(0)
      expected.varint(UInt64(count))
      for i in 0..<count {
        expected.varint(UInt64(i))
        expected.value(.string("é\(i)"))
      }
      let record = state.encoded()
      #expect(record == expected.bytes)
      #expect(try record.withUnsafeBytes { try ObjectState.decode($0, id: ObjectID(7), model: model) } == state)
    }
  }

  @Test(
    "strings decode as they were written, ASCII or not, and invalid UTF-8 is refused", arguments: [0, 7, 8, 9, 100])
  func stringDecoding(length: Int) throws {
    for text in [
      String(repeating: "a", count: length), String(repeating: "a", count: length) + "桃",
      "é" + String(repeating: "a", count: length),
    ] {
      var w = BinaryWriter()
      w.string(text)
      #expect(
        try w.bytes.withUnsafeBytes { raw in
          var r = BinaryReader(raw)
          return try r.string()
        } == text)
    }
    var bad = Array(String(repeating: "a", count: length).utf8) + [0xFF]
    bad.insert(UInt8(bad.count), at: 0)
    #expect(throws: CorruptionError.self) {
      try bad.withUnsafeBytes { raw in
        var r = BinaryReader(raw)
        return try r.string()
      }
    }
  }

  @Test("CRC-32C matches the standard check value")
  func crcCheckValue() {
    #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
    #expect(CRC32C.checksum([UInt8]()) == 0)
  }

  /// CRC-32C bit by bit, straight from its definition (reflected, polynomial 0x82F63B78):
  /// the oracle ISA-L's accelerated one is held to.
  static func bitwiseCRC32C(_ bytes: [UInt8]) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for b in bytes {
      crc ^= UInt32(b)
      for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
    }
    return ~crc
  }

  @Test("CRC-32C agrees with its bit-by-bit definition on random bytes of every length up to 300, and at any offset")
  func crcAgreesWithDefinition() {
    var g = SeededGenerator(seed: 14)
    for c in stressCases(600) {
      let count = Int(c % 301)
      let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &g) }
      #expect(CRC32C.checksum(bytes) == Self.bitwiseCRC32C(bytes), "\(count) bytes, case \(c)")
      // A record inside a page: the same bytes read at an unaligned address.
      let shifted = [UInt8](repeating: 0xA5, count: Int(c % 7) + 1) + bytes
      shifted.withUnsafeBytes { raw in
        let inner = UnsafeRawBufferPointer(rebasing: raw[(shifted.count - count)...])
        #expect(CRC32C.checksum(inner) == Self.bitwiseCRC32C(bytes), "\(count) bytes at offset \(c % 7 + 1)")
      }
    }
  }
}
