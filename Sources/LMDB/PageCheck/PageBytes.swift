/// Bytes read from the file, with every read bounds-checked: damage gives `nil`, never a trap.
struct PageBytes {
  let bytes: [UInt8]

  func u16(_ at: Int) -> UInt16? { read(at) }
  func u32(_ at: Int) -> UInt32? { read(at) }
  func u64(_ at: Int) -> UInt64? { read(at) }

  /// LMDB's pages hold their fields in the machine's order, little-endian here.
  private func read<T: FixedWidthInteger & BitwiseCopyable>(_ at: Int) -> T? {
    bytes.withUnsafeBytes { $0.integer(T.self, at: at, .littleEndian) }
  }

  func slice(_ at: Int, _ count: Int) -> ArraySlice<UInt8>? {
    guard at >= 0, count >= 0, at + count <= bytes.count else { return nil }
    return bytes[at..<(at + count)]
  }
}
