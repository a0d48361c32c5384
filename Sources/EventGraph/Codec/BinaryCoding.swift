internal import LMDB

/// Appends the binary encodings of the store: LEB128 varints, zigzag integers,
/// little-endian fixed-width floats, length-prefixed bytes.
struct BinaryWriter {
  var bytes: [UInt8]

  init(capacity: Int = 64) {
    bytes = []
    bytes.reserveCapacity(capacity)
  }

  /// Empties the buffer, keeping its storage, for a writer that encodes one record after
  /// another.
  mutating func reset() { bytes.removeAll(keepingCapacity: true) }

  /// The number of bytes ``varint(_:)`` writes for `v`.
  @inline(__always)
  static func varintSize(_ v: UInt64) -> Int { v < 0x80 ? 1 : (70 - v.leadingZeroBitCount) / 7 }

  @inline(__always)
  mutating func byte(_ b: UInt8) { bytes.append(b) }

  @inline(__always)
  mutating func varint(_ v: UInt64) {
    var v = v
    while v >= 0x80 {
      bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
      v >>= 7
    }
    bytes.append(UInt8(v))
  }

  @inline(__always)
  mutating func zigzag(_ v: Int64) { varint(UInt64(bitPattern: (v << 1) ^ (v >> 63))) }

  mutating func fixed64(_ v: UInt64) {
    for i in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) }
  }

  mutating func fixed32(_ v: UInt32) {
    for i in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: v >> (8 * UInt32(i)))) }
  }

  mutating func lengthPrefixed(_ b: some Collection<UInt8>) {
    varint(UInt64(b.count))
    bytes.append(contentsOf: b)
  }

  /// Writes a placeholder for a count that is known only after the entries it counts
  /// (one byte, enough for almost every record); ``fillCount(_:at:)`` writes it.
  ///
  /// - Returns: where the placeholder is.
  mutating func countPlaceholder() -> Int {
    bytes.append(0)
    return bytes.count - 1
  }

  /// Writes the count whose placeholder is at `at`, widening it in the rare case it needs
  /// more than one byte (a second pass to count first would copy every entry once more).
  mutating func fillCount(_ count: UInt64, at: Int) {
    if count < 0x80 {
      bytes[at] = UInt8(count)
    } else {
      var c = BinaryWriter(capacity: 10)
      c.varint(count)
      bytes.replaceSubrange(at...at, with: c.bytes)
    }
  }

  mutating func string(_ s: String) {
    // A native string lends its UTF-8 in place; only a bridged one is copied first.
    if s.utf8.withContiguousStorageIfAvailable({ lengthPrefixed($0) }) != nil { return }
    var s = s
    s.withUTF8 { lengthPrefixed($0) }
  }
}

/// A failure to decode stored bytes: the record is damaged or not ours.
public struct CorruptionError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What was being read (for example "commit at sequence 12").
  public var context: String
  public var offset: Int
  public var reason: String
  public var description: String { "\(context): corrupt at byte \(offset): \(reason)" }
}

/// Reads what ``BinaryWriter`` wrote, checking every bound: damaged input gives a
/// ``CorruptionError``, never a trap.
struct BinaryReader {
  let bytes: UnsafeRawBufferPointer
  var offset = 0

  init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

  var isAtEnd: Bool { offset >= bytes.count }
  var remaining: Int { bytes.count - offset }

  func failure(_ reason: String) -> CorruptionError {
    CorruptionError(context: "", offset: offset, reason: reason)
  }

  @inline(__always)
  mutating func byte() throws(CorruptionError) -> UInt8 {
    guard offset < bytes.count else { throw failure("unexpected end") }
    defer { offset += 1 }
    return bytes[offset]
  }

  @inline(__always)
  mutating func varint() throws(CorruptionError) -> UInt64 {
    var result: UInt64 = 0
    var shift: UInt64 = 0
    while true {
      guard offset < bytes.count else { throw failure("unexpected end in a number") }
      let b = bytes[offset]
      offset += 1
      guard shift < 64 else { throw failure("number too long") }
      result |= UInt64(b & 0x7F) << shift
      if b < 0x80 { return result }
      shift += 7
    }
  }

  mutating func zigzag() throws(CorruptionError) -> Int64 {
    let v = try varint()
    return Int64(bitPattern: v >> 1) ^ -Int64(bitPattern: v & 1)
  }

  mutating func int(max: UInt64 = UInt64(Int32.max)) throws(CorruptionError) -> Int {
    let v = try varint()
    guard v <= max else { throw failure("number \(v) out of range") }
    return Int(v)
  }

  mutating func fixed64() throws(CorruptionError) -> UInt64 {
    guard let v = bytes.integer(UInt64.self, at: offset, .littleEndian) else {
      throw failure("unexpected end in a 64-bit field")
    }
    offset += 8
    return v
  }

  mutating func fixed32() throws(CorruptionError) -> UInt32 {
    guard let v = bytes.integer(UInt32.self, at: offset, .littleEndian) else {
      throw failure("unexpected end in a 32-bit field")
    }
    offset += 4
    return v
  }

  mutating func slice() throws(CorruptionError) -> UnsafeRawBufferPointer {
    let n = try varint()
    guard n <= UInt64(remaining) else { throw failure("length \(n) beyond the end") }
    // SAFETY: the range is inside `bytes`, checked above.
    let s = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + Int(n))])
    offset += Int(n)
    return s
  }

  /// Moves past `count` bytes.
  mutating func skip(_ count: Int) throws(CorruptionError) {
    guard remaining >= count else { throw failure("unexpected end") }
    offset += count
  }

  /// Checks a string as ``string()`` reads it, without making the `String`.
  mutating func checkString() throws(CorruptionError) {
    let s = try slice()
    if Self.isASCII(s) { return }
    guard String(validating: s.bindMemory(to: UInt8.self), as: UTF8.self) != nil else {
      throw failure("invalid UTF-8")
    }
  }

  mutating func string() throws(CorruptionError) -> String {
    let s = try slice()
    // ASCII, the common case, is valid UTF-8 as it stands: `String(decoding:)` takes it
    // with no repair and no generic validation (several times faster); anything else is
    // validated strictly.
    if Self.isASCII(s) { return String(decoding: s, as: UTF8.self) }
    guard let text = String(validating: s.bindMemory(to: UInt8.self), as: UTF8.self) else {
      throw failure("invalid UTF-8")
    }
    return text
  }

  /// Whether every byte is below 0x80, checked 32 and then 8 bytes at a time.
  static func isASCII(_ b: UnsafeRawBufferPointer) -> Bool {
    var i = 0
    var high: UInt64 = 0
    while b.count &- i >= 32 {
      // SAFETY: `i + 32 <= b.count`: the four 8-byte reads are inside `b`.
      high |=
        b.loadUnaligned(fromByteOffset: i, as: UInt64.self) | b.loadUnaligned(fromByteOffset: i &+ 8, as: UInt64.self)
        | b.loadUnaligned(fromByteOffset: i &+ 16, as: UInt64.self)
        | b.loadUnaligned(fromByteOffset: i &+ 24, as: UInt64.self)
      i &+= 32
    }
    while b.count &- i >= 8 {
      // SAFETY: `i + 8 <= b.count`: the 8 bytes read are inside `b`.
      high |= b.loadUnaligned(fromByteOffset: i, as: UInt64.self)
      i &+= 8
    }
    while i < b.count {
      high |= UInt64(b[i])
      i += 1
    }
    return high & 0x8080_8080_8080_8080 == 0
  }
}
