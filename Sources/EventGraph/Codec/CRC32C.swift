internal import CISAL

/// CRC-32C (Castagnoli), the checksum of every commit record (and of an upcast's
/// fingerprint).
enum CRC32C {
  /// The checksum of `bytes`, by ISA-L (`crc32_iscsi`: the processor's CRC instructions
  /// where it has them, chosen at run time).
  static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
    // SAFETY: the bytes are only read, as bytes (whatever else they are: a commit record in
    // an array, or in an LMDB page).
    let typed = bytes.bindMemory(to: UInt8.self)
    guard let base = typed.baseAddress else { return 0 }
    var crc: UInt32 = 0xFFFF_FFFF
    var offset = 0
    // Its length is a C `int`: pieces of at most 1 GiB, each carrying the CRC on.
    while offset < typed.count {
      let n = min(typed.count - offset, 1 << 30)
      // SAFETY: `crc32_iscsi` reads `n` bytes from `base + offset`, all inside `bytes`, and
      // writes none (its parameter lacks `const` in the header only).
      crc = crc32_iscsi(UnsafeMutablePointer(mutating: base + offset), Int32(n), crc)
      offset += n
    }
    return ~crc
  }

  static func checksum(_ bytes: [UInt8]) -> UInt32 {
    bytes.withUnsafeBytes { checksum($0) }
  }
}
