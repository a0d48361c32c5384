/// Bytes read from the file, with every read bounds-checked: damage gives `nil`, never a trap.
struct PageBytes {
  let bytes: [UInt8]

  func u16(_ at: Int) -> UInt16? {
    guard at >= 0, at + 2 <= bytes.count else { return nil }
    return UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8
  }

  func u32(_ at: Int) -> UInt32? {
    guard let lo = u16(at), let hi = u16(at + 2) else { return nil }
    return UInt32(lo) | UInt32(hi) << 16
  }

  func u64(_ at: Int) -> UInt64? {
    guard let lo = u32(at), let hi = u32(at + 4) else { return nil }
    return UInt64(lo) | UInt64(hi) << 32
  }

  func slice(_ at: Int, _ count: Int) -> ArraySlice<UInt8>? {
    guard at >= 0, count >= 0, at + count <= bytes.count else { return nil }
    return bytes[at..<(at + count)]
  }
}
