/// CRC-32C (Castagnoli), the checksum of every commit record, computed slicing-by-16.
enum CRC32C {
  /// 16 tables of 256 entries: table `k` advances a byte's contribution by `k` more bytes.
  private static let table: [UInt32] = {
    var t = [UInt32](repeating: 0, count: 16 * 256)
    for i in 0..<256 {
      var c = UInt32(i)
      for _ in 0..<8 { c = c & 1 != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
      t[i] = c
    }
    for i in 0..<256 {
      for k in 1..<16 { t[k * 256 + i] = (t[(k - 1) * 256 + i] >> 8) ^ t[Int(t[(k - 1) * 256 + i] & 0xFF)] }
    }
    return t
  }()

  /// The checksum of `bytes`.
  static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    var i = 0
    let n = bytes.count
    table.withUnsafeBufferPointer { t in
      // SAFETY: every table index below is a byte value plus a multiple of 256 below
      // 16 * 256, inside the table; every byte read is below `n` (the loop bounds).
      @inline(__always) func at(_ k: Int, _ byte: UInt32) -> UInt32 { t[k &* 256 &+ Int(byte & 0xFF)] }
      // Sixteen bytes a round: two independent halves of table lookups, half the
      // dependency chain of slicing-by-8 per byte.
      while n &- i >= 16 {
        // SAFETY: `i + 16 <= n`: both 8-byte reads are inside `bytes`.
        let a = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self))
        let b = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: i &+ 8, as: UInt64.self))
        let x = crc ^ UInt32(truncatingIfNeeded: a)
        let y = UInt32(truncatingIfNeeded: a >> 32)
        let z = UInt32(truncatingIfNeeded: b)
        let w = UInt32(truncatingIfNeeded: b >> 32)
        let lo =
          at(15, x) ^ at(14, x >> 8) ^ at(13, x >> 16) ^ at(12, x >> 24) ^ at(11, y) ^ at(10, y >> 8)
          ^ at(9, y >> 16) ^ at(8, y >> 24)
        let hi =
          at(7, z) ^ at(6, z >> 8) ^ at(5, z >> 16) ^ at(4, z >> 24) ^ at(3, w) ^ at(2, w >> 8)
          ^ at(1, w >> 16) ^ at(0, w >> 24)
        crc = lo ^ hi
        i &+= 16
      }
      while i < n {
        crc = t[Int((crc ^ UInt32(bytes[i])) & 0xFF)] ^ (crc >> 8)
        i &+= 1
      }
    }
    return ~crc
  }

  static func checksum(_ bytes: [UInt8]) -> UInt32 {
    bytes.withUnsafeBytes { checksum($0) }
  }
}
