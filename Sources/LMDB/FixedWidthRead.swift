/// The byte order of a stored integer.
public enum ByteOrder: Sendable, Hashable {
  /// Most significant byte first: keys, so that `memcmp` order is numeric order.
  case bigEndian
  /// Least significant byte first: record fields, checksums and LMDB's own pages.
  case littleEndian
}

extension UnsafeRawBufferPointer {
  /// The integer of type `T` stored at `offset` in `order`; `nil` when its bytes do not lie
  /// wholly inside the buffer (a negative offset included).
  ///
  /// The one reader of fixed-width integers for keys, values, records and pages: a
  /// damaged or short input gives `nil`, never a trap or a read outside the buffer.
  @inlinable
  public func integer<T: FixedWidthInteger & BitwiseCopyable>(_ type: T.Type, at offset: Int, _ order: ByteOrder)
    -> T?
  {
    guard offset >= 0, offset <= count - MemoryLayout<T>.size else { return nil }
    // SAFETY: the `MemoryLayout<T>.size` bytes from `offset` are inside the buffer (checked
    // above); an unaligned load of an integer reads them as plain bytes.
    let raw = loadUnaligned(fromByteOffset: offset, as: T.self)
    switch order {
    case .bigEndian: return T(bigEndian: raw)
    case .littleEndian: return T(littleEndian: raw)
    }
  }
}
