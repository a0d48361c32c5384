import LMDB

/// A key of the projection databases: fixed-width big-endian fields, so that `memcmp`
/// order is numeric order, built without allocating (at most 24 bytes, inline).
struct StoreKey: LMDBBytes {
  private var storage: (UInt64, UInt64, UInt64) = (0, 0, 0)
  private(set) var count = 0

  @inline(__always)
  private mutating func append(_ value: UInt64, width: Int) {
    precondition(count + width <= 24, "StoreKey holds at most 24 bytes")
    let start = count
    withUnsafeMutableBytes(of: &storage) { raw in
      if start + 8 <= raw.count {
        // SAFETY: `start + 8 <= raw.count`; the field's bytes first, big-endian, then zeros
        // past `count`, which later fields overwrite.
        raw.storeBytes(of: (value << (64 - 8 * UInt64(width))).bigEndian, toByteOffset: start, as: UInt64.self)
      } else {
        // SAFETY: `start + width <= 24 == raw.count`, checked above.
        for i in 0..<width { raw[start + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(width - 1 - i))) }
      }
    }
    count += width
  }

  /// Always: the bytes are a local copy of the fields.
  var isOwnMemory: Bool { true }

  mutating func u64(_ v: UInt64) { append(v, width: 8) }
  mutating func u32(_ v: UInt32) { append(UInt64(v), width: 4) }
  mutating func u16(_ v: UInt16) { append(UInt64(v), width: 2) }

  func withLMDBBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    var copy = storage
    // SAFETY: `copy` is a local that outlives the call; `count <= 24`.
    return try withUnsafeBytes(of: &copy) { try body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
  }

  var bytes: [UInt8] { withLMDBBytes { [UInt8]($0) } }

  // MARK: - The keys of each database (Docs/store-layout.md)

  /// `objects`, `identities`: object.
  static func object(_ o: ObjectID) -> StoreKey {
    var k = StoreKey()
    k.u64(o.rawValue)
    return k
  }

  /// `links`: object, relationship (high bit set for a reverse entry).
  static func links(_ o: ObjectID, _ rel: UInt16) -> StoreKey {
    var k = StoreKey()
    k.u64(o.rawValue)
    k.u16(rel)
    return k
  }

  /// `links`, unordered: object, relationship, target → ∅.
  static func link(_ o: ObjectID, _ rel: UInt16, target: ObjectID) -> StoreKey {
    var k = links(o, rel)
    k.u64(target.rawValue)
    return k
  }

  /// `links`, ordered: object, relationship, order key → target (Projection/OrderedLinks.swift).
  static func link(_ o: ObjectID, _ rel: UInt16, order: UInt64) -> StoreKey {
    var k = links(o, rel)
    k.u64(order)
    return k
  }

  /// `entities`: entity, object → ∅.
  static func entity(_ e: EntityID, _ o: ObjectID) -> StoreKey {
    var k = StoreKey()
    k.u16(e.rawValue)
    k.u64(o.rawValue)
    return k
  }

  static func entityPrefix(_ e: EntityID) -> StoreKey {
    var k = StoreKey()
    k.u16(e.rawValue)
    return k
  }

  /// `history`: object, first sequence of a commit that touched it → ∅.
  static func history(_ o: ObjectID, _ sequence: UInt64) -> StoreKey {
    var k = StoreKey()
    k.u64(o.rawValue)
    k.u64(sequence)
    return k
  }

  /// `log`: first sequence of the commit.
  static func sequence(_ s: UInt64) -> StoreKey {
    var k = StoreKey()
    k.u64(s)
    return k
  }
}

/// Reading big-endian fields back out of a stored key.
enum KeyField {
  static func u64(_ b: UnsafeRawBufferPointer, at offset: Int) -> UInt64? {
    guard offset >= 0, offset + 8 <= b.count else { return nil }
    // SAFETY: the 8 bytes read are inside `b` (checked above).
    return UInt64(bigEndian: b.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
  }

  static func u16(_ b: UnsafeRawBufferPointer, at offset: Int) -> UInt16? {
    guard offset + 2 <= b.count else { return nil }
    return UInt16(b[offset]) << 8 | UInt16(b[offset + 1])
  }

  static func u32(_ b: UnsafeRawBufferPointer, at offset: Int) -> UInt32? {
    guard offset + 4 <= b.count else { return nil }
    var v: UInt32 = 0
    for i in 0..<4 { v = v << 8 | UInt32(b[offset + i]) }
    return v
  }

  /// Whether `b` starts with the bytes of `prefix`.
  static func hasPrefix(_ b: UnsafeRawBufferPointer, _ prefix: StoreKey) -> Bool {
    prefix.withLMDBBytes { p in b.count >= p.count && memcmpEqual(b, p) }
  }

  private static func memcmpEqual(_ a: UnsafeRawBufferPointer, _ p: UnsafeRawBufferPointer) -> Bool {
    for i in 0..<p.count where a[i] != p[i] { return false }
    return true
  }
}
