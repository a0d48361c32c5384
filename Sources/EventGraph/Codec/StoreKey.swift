internal import LMDB

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

  /// `links`: object, relationship slot.
  static func links(_ o: ObjectID, _ rel: LinkSlot) -> StoreKey {
    var k = StoreKey()
    k.u64(o.rawValue)
    k.u16(rel.stored)
    return k
  }

  /// `links`, unordered: object, relationship slot, target → ∅.
  static func link(_ o: ObjectID, _ rel: LinkSlot, target: ObjectID) -> StoreKey {
    var k = links(o, rel)
    k.u64(target.rawValue)
    return k
  }

  /// `links`, ordered: object, relationship, order key → target (Projection/OrderedLinks.swift).
  static func link(_ o: ObjectID, _ rel: LinkSlot, order: UInt64) -> StoreKey {
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

/// The relationship half of a `links` (and `members`) key: a relationship's own entries
/// at its source, or the reverse entries kept at each target of a relationship without an
/// inverse, so that deleting the target can find and unlink its sources (stored as the
/// relationship's number with the high bit set; Docs/store-layout.md).
struct LinkSlot: Hashable, Comparable, Sendable {
  /// The two bytes of the key, as a number.
  let stored: UInt16

  private static let reverseBit: UInt16 = 0x8000

  /// The slot of the relationship's own entries.
  init(_ relationship: PropertyID) { stored = relationship.rawValue }

  /// The slot as a key holds it.
  init(stored: UInt16) { self.stored = stored }

  /// The slot of the reverse entries of `relationship`, one with no inverse.
  static func reverse(of relationship: PropertyID) -> LinkSlot {
    LinkSlot(stored: relationship.rawValue | reverseBit)
  }

  /// Whether this slot holds reverse entries (its sources are the key's targets).
  var isReverse: Bool { stored & Self.reverseBit != 0 }

  /// The relationship whose entries (own or reverse) the slot holds.
  var relationship: PropertyID { PropertyID(rawValue: stored & ~Self.reverseBit) }

  /// The slot after this one in key order: where a scan of this one's entries ends.
  var next: LinkSlot { LinkSlot(stored: stored &+ 1) }

  /// Key order.
  static func < (a: LinkSlot, b: LinkSlot) -> Bool { a.stored < b.stored }
}

/// An entry of `links` (or `members`), read back: object (8 bytes), slot (2), then the
/// target of an unordered relationship's entry or the order key of an ordered one's (8).
enum LinkEntry {
  /// The slot of a `links` key.
  static func slot(_ key: UnsafeRawBufferPointer) -> LinkSlot? { KeyField.u16(key, at: 8).map(LinkSlot.init(stored:)) }

  /// The field after the slot: the target of an unordered entry, the order key of an
  /// ordered one.
  static func last(_ key: UnsafeRawBufferPointer) -> UInt64? { KeyField.u64(key, at: 10) }

  /// The target an entry leads to: its value for an ordered list's entry (8 bytes), the
  /// key's last field otherwise.
  static func target(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> ObjectID? {
    if value.count == 8, let t = KeyField.u64(value, at: 0) { return ObjectID(t) }
    return last(key).map { ObjectID($0) }
  }
}

/// Reading big-endian fields back out of a stored key.
enum KeyField {
  /// The eight bytes of `n`, big-endian: what ``u64(_:at:)`` reads.
  static func bytes(_ n: UInt64) -> [UInt8] { withUnsafeBytes(of: n.bigEndian) { Array($0) } }

  static func u64(_ b: UnsafeRawBufferPointer, at offset: Int) -> UInt64? {
    b.integer(UInt64.self, at: offset, .bigEndian)
  }
  static func u16(_ b: UnsafeRawBufferPointer, at offset: Int) -> UInt16? {
    b.integer(UInt16.self, at: offset, .bigEndian)
  }
  static func u32(_ b: UnsafeRawBufferPointer, at offset: Int) -> UInt32? {
    b.integer(UInt32.self, at: offset, .bigEndian)
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
