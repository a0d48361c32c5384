/// CRC-32C (Castagnoli), the checksum of every commit record, computed slicing-by-8.
enum CRC32C {
  private static let table: [UInt32] = {
    var t = [UInt32](repeating: 0, count: 8 * 256)
    for i in 0..<256 {
      var c = UInt32(i)
      for _ in 0..<8 { c = c & 1 != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
      t[i] = c
    }
    for i in 0..<256 {
      for k in 1..<8 { t[k * 256 + i] = (t[(k - 1) * 256 + i] >> 8) ^ t[Int(t[(k - 1) * 256 + i] & 0xFF)] }
    }
    return t
  }()

  /// The checksum of `bytes`.
  static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    var i = 0
    let n = bytes.count
    table.withUnsafeBufferPointer { t in
      // SAFETY: every index below is `< n` (checked by the loop bounds) or a byte value plus
      // a multiple of 256 below 8 * 256, inside the table.
      while i + 8 <= n {
        // SAFETY: `i + 8 <= n`: the 8 bytes read are inside `bytes`.
        let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self))
        let x = crc ^ UInt32(truncatingIfNeeded: word)
        let hi = UInt32(truncatingIfNeeded: word >> 32)
        crc =
          t[7 * 256 + Int(x & 0xFF)] ^ t[6 * 256 + Int((x >> 8) & 0xFF)] ^ t[5 * 256 + Int((x >> 16) & 0xFF)]
          ^ t[4 * 256 + Int(x >> 24)] ^ t[3 * 256 + Int(hi & 0xFF)] ^ t[2 * 256 + Int((hi >> 8) & 0xFF)]
          ^ t[256 + Int((hi >> 16) & 0xFF)] ^ t[Int(hi >> 24)]
        i += 8
      }
      while i < n {
        crc = t[Int((crc ^ UInt32(bytes[i])) & 0xFF)] ^ (crc >> 8)
        i += 1
      }
    }
    return ~crc
  }

  static func checksum(_ bytes: [UInt8]) -> UInt32 {
    bytes.withUnsafeBytes { checksum($0) }
  }
}
