import TestSupport
import Testing

@testable import LMDB

@Suite("Fixed-width integers read out of bytes: one bounds check for keys, records and pages")
struct FixedWidthReadTests {
  /// The integer of `width` bytes at `offset`, assembled byte by byte (the reference).
  private func reference(_ bytes: [UInt8], _ offset: Int, _ width: Int, _ order: ByteOrder) -> UInt64 {
    let field = bytes[offset..<(offset + width)]
    let ordered = order == .bigEndian ? Array(field) : field.reversed()
    return ordered.reduce(0) { $0 << 8 | UInt64($1) }
  }

  @Test("inside the buffer every width and order reads the bytes' number; outside, nil and no trap")
  func readsOrRefuses() {
    var g = SeededGenerator(seed: 77)
    for _ in 0..<300 {
      let bytes = (0..<g.int(0...24)).map { _ in UInt8.random(in: 0...255, using: &g) }
      let offset = g.int(-3...26)
      let order: ByteOrder = g.chance(0.5) ? .bigEndian : .littleEndian
      bytes.withUnsafeBytes { b in
        for width in [2, 4, 8] {
          let inside = offset >= 0 && offset + width <= bytes.count
          let read: UInt64? =
            switch width {
            case 2: b.integer(UInt16.self, at: offset, order).map(UInt64.init)
            case 4: b.integer(UInt32.self, at: offset, order).map(UInt64.init)
            default: b.integer(UInt64.self, at: offset, order)
            }
          let expected = inside ? reference(bytes, offset, width, order) : nil
          #expect(read == expected, "\(width) bytes at \(offset) of \(bytes.count), \(order)")
        }
      }
    }
  }

  @Test("an empty buffer (no base address) reads nothing")
  func emptyBuffer() {
    let empty = UnsafeRawBufferPointer(start: nil, count: 0)
    #expect(empty.integer(UInt16.self, at: 0, .bigEndian) == nil)
    #expect(empty.integer(UInt8.self, at: 0, .littleEndian) == nil)
  }

  @Test("CRC-32C: the standard check value, and one checksum whether the bytes come whole or as key and value")
  func crc() {
    #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
    var g = SeededGenerator(seed: 5)
    for _ in 0..<50 {
      let bytes = (0..<g.int(0...300)).map { _ in UInt8.random(in: 0...255, using: &g) }
      let split = g.int(0...bytes.count)
      bytes.withUnsafeBytes { all in
        let pair = EntryChecksum.ofByLibrary(
          UnsafeRawBufferPointer(rebasing: all[..<split]), UnsafeRawBufferPointer(rebasing: all[split...]))
        #expect(pair == CRC32C.checksum(all), "\(bytes.count) bytes split at \(split)")
      }
    }
  }
}
