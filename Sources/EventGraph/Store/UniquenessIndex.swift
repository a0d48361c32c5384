import Foundation
import LMDB

/// The `unique.vN` database: which object holds each value of each uniqueness constraint,
/// kept in the commit's own LMDB transaction, so that two commits racing for one value
/// cannot both land (Docs/store-layout.md, "unique").
///
/// Two kinds of entry:
///
/// - `00 · entity u16 · constraint u16 · 00 · values` → object u64: the holder of a tuple of
///   values (`01 · SHA-256 of the values` in place of `00 · values` when they are longer
///   than ``longest`` bytes, which an LMDB key cannot be);
/// - `01 · object u64 · entity u16 · constraint u16` → the first kind's key: what the object
///   holds, so that a change finds the entry to take back without the object's old values.
///
/// The values are each written as a length (u32) and exact bytes: strings in Unicode's
/// normal form C (canonically equal strings, which Swift and predicates call equal, are
/// one value), decimals as their shortest text, `-0.0` as `0.0`.
struct UniquenessIndex {
  let txn: WriteHandle
  let db: Database
  let model: Model

  /// Values longer than this are keyed by their SHA-256 (LMDB keys stop at 511 bytes).
  static let longest = 400

  /// An object whose entries are brought up to date: its entity and, while it lives, its
  /// values; `isNew` when it has no entries yet (inserted in this transaction).
  struct Item {
    let id: ObjectID
    let entity: EntityID
    let value: ((PropertyID) throws -> Value?)?
    let isNew: Bool
  }

  /// Takes back the entries of the objects' old values, then puts those of their new ones,
  /// so that values exchanged within one commit do not collide.
  ///
  /// - Throws: ``StoreError/notUnique(object:entity:attributes:value:holder:)`` for a
  ///   value another object holds.
  func update(_ items: [Item], display: (ObjectID) -> String) throws {
    var puts: [(item: Item, constraint: UniquenessConstraint, key: [UInt8], reverse: [UInt8])] = []
    for item in items {
      for c in model.uniqueness[Int(item.entity.rawValue)] {
        let reverse = Self.reverseKey(item.id, c)
        let old = item.isNew ? nil : try txn.get(db, key: reverse)
        let new = try item.value.flatMap { try Self.key(c, values: $0) }
        if old == new { continue }
        if let old {
          try txn.delete(db, key: old)
          if new == nil { try txn.delete(db, key: reverse) }
        }
        if let new { puts.append((item, c, new, reverse)) }
      }
    }
    for p in puts {
      guard try txn.put(db, key: p.key, value: BigEndianKey(p.item.id.rawValue), flags: .noOverwrite) else {
        let holder = try txn.get(db, key: p.key).flatMap { b in b.withUnsafeBytes { KeyField.u64($0, at: 0) } }
        let values = try p.constraint.attributes.map { try p.item.value?($0.id) }
        throw StoreError.notUnique(
          object: display(p.item.id), entity: p.constraint.entityName, attributes: p.constraint.text,
          value: Self.text(values), holder: holder.map { display(ObjectID($0)) } ?? "?")
      }
      try txn.put(db, key: p.reverse, value: p.key)
    }
  }

  /// The key of the tuple of values an object holds, `nil` when any of them is `nil`.
  static func key(_ c: UniquenessConstraint, values: (PropertyID) throws -> Value?) throws -> [UInt8]? {
    var bytes: [UInt8] = []
    for a in c.attributes {
      guard let v = try values(a.id) else { return nil }
      let content = exactBytes(v)
      for i in (0..<4).reversed() { bytes.append(UInt8(truncatingIfNeeded: content.count >> (8 * i))) }
      bytes += content
    }
    var key: [UInt8] = [0] + u16(c.entity.rawValue) + u16(UInt16(c.index))
    if bytes.count <= longest {
      key.append(0)
      key += bytes
    } else {
      key.append(1)
      key += SHA256.digest(bytes)
    }
    return key
  }

  static func reverseKey(_ o: ObjectID, _ c: UniquenessConstraint) -> [UInt8] {
    var key: [UInt8] = [1]
    for i in (0..<8).reversed() { key.append(UInt8(truncatingIfNeeded: o.rawValue >> (8 * UInt64(i)))) }
    return key + u16(c.entity.rawValue) + u16(UInt16(c.index))
  }

  private static func u16(_ n: UInt16) -> [UInt8] { [UInt8(n >> 8), UInt8(truncatingIfNeeded: n)] }

  /// A value's bytes, equal exactly when the values are equal.
  private static func exactBytes(_ v: Value) -> [UInt8] {
    func be(_ n: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: n >> (8 * UInt64(7 - $0))) } }
    switch v {
    case .int16(let n): return be(UInt64(bitPattern: Int64(n)))
    case .int32(let n): return be(UInt64(bitPattern: Int64(n)))
    case .int64(let n): return be(UInt64(bitPattern: n))
    case .double(let d): return be((d == 0 ? 0 : d).bitPattern)
    case .float(let f): return be(Double(f == 0 ? 0 : f).bitPattern)
    case .decimal(let d): return Array(d.description.utf8)
    case .date(let d): return be(d.timeIntervalSince1970.bitPattern)
    case .boolean(let b): return [b ? 1 : 0]
    case .uuid(let u):
      let t = u.uuid
      return [t.0, t.1, t.2, t.3, t.4, t.5, t.6, t.7, t.8, t.9, t.10, t.11, t.12, t.13, t.14, t.15]
    case .string(let s): return Array(s.precomposedStringWithCanonicalMapping.utf8)
    case .uri(let s): return Array(s.utf8)
    case .binary(let b): return b
    }
  }

  /// The values as a message shows them: `'momo'`, or `('A', 7)` for several.
  private static func text(_ values: [Value?]) -> String {
    let shown = values.map { $0?.displayText ?? "nil" }
    return shown.count == 1 ? shown[0] : "(" + shown.joined(separator: ", ") + ")"
  }
}
