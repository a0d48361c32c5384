import Foundation
internal import LMDB

/// Keys of the `index.vN` database: entity u16 · attribute u16 · order-preserving value ·
/// object u64.
///
/// Byte order (memcmp) of the encoded values is the order of the values, so an
/// equality or a range on an indexed attribute is one cursor range.
///
/// Strings (NFC, so that canonically equal strings have one encoding), URIs and binary
/// values escape 0x00 as 00 FF and end with 00 01; longer than 256 bytes, they are cut and
/// end with 00 02, which makes the index a candidate list: a fetch always checks the full
/// predicate on what the index yields.
enum IndexKey {
  static let maximumContent = 256

  /// The prefix of every entry of one attribute of one entity.
  static func prefix(entity: EntityID, attribute: PropertyID) -> [UInt8] {
    [
      UInt8(entity.rawValue >> 8), UInt8(truncatingIfNeeded: entity.rawValue), UInt8(attribute.rawValue >> 8),
      UInt8(truncatingIfNeeded: attribute.rawValue),
    ]
  }

  /// Whether a value has an entry: every value but a personal one without a blind hash
  /// (an erased subject's, Projector+Erase.swift).
  static func isKeyed(_ value: Value) -> Bool {
    guard case .sealed(let s) = value else { return true }
    return !s.blindHash.isEmpty
  }

  /// The order-preserving bytes of a value.
  static func encode(_ value: Value) -> [UInt8] {
    switch value {
    case .int16(let n): return ordered(Int64(n))
    case .int32(let n): return ordered(Int64(n))
    case .int64(let n): return ordered(n)
    case .double(let d): return ordered(d)
    case .float(let f): return ordered(Double(f))
    case .decimal(let d): return ordered(NSDecimalNumber(decimal: d).doubleValue)
    case .date(let d): return ordered(d.timeIntervalSince1970)
    case .boolean(let b): return [b ? 1 : 0]
    case .uuid(let u):
      let t = u.uuid
      return [t.0, t.1, t.2, t.3, t.4, t.5, t.6, t.7, t.8, t.9, t.10, t.11, t.12, t.13, t.14, t.15]
    case .string(let s): return bytes(Array(s.precomposedStringWithCanonicalMapping.utf8))
    case .uri(let s): return bytes(Array(s.utf8))
    case .binary(let b): return bytes(b)
    // The blind hash: equal values of one subject key space meet, and nothing of the
    // value or its order shows (Docs/privacy.md).
    case .sealed(let s): return bytes(s.blindHash)
    }
  }

  /// The full key of one entry.
  static func key(entity: EntityID, attribute: PropertyID, value: Value, object: ObjectID) -> [UInt8] {
    var k = prefix(entity: entity, attribute: attribute) + encode(value)
    for i in (0..<8).reversed() { k.append(UInt8(truncatingIfNeeded: object.rawValue >> (8 * UInt64(i)))) }
    return k
  }

  private static func ordered(_ n: Int64) -> [UInt8] {
    let u = UInt64(bitPattern: n) ^ (1 << 63)
    return (0..<8).map { UInt8(truncatingIfNeeded: u >> (8 * UInt64(7 - $0))) }
  }

  private static func ordered(_ d: Double) -> [UInt8] {
    let v = d == 0 ? 0 : d  // -0.0 and 0.0 are one value
    let bits = v.bitPattern
    let u = bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
    return (0..<8).map { UInt8(truncatingIfNeeded: u >> (8 * UInt64(7 - $0))) }
  }

  /// The bytes every key of a string starting with `prefix` starts with: the prefix in
  /// normal form C, escaped, without the end marker (cut as a long value's key is).
  static func prefixBytes(_ prefix: String) -> [UInt8] {
    Array(bytes(Array(prefix.precomposedStringWithCanonicalMapping.utf8)).dropLast(2))
  }

  private static func bytes(_ content: [UInt8]) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(min(content.count, maximumContent) + 4)
    for b in content.prefix(maximumContent) {
      out.append(b)
      if b == 0 { out.append(0xFF) }
    }
    out += [0, content.count > maximumContent ? 2 : 1]
    return out
  }
}
