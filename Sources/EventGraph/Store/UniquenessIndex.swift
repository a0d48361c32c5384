internal import EventGraphText
import Foundation
internal import LMDB

/// The `unique.vN` database: which object holds each value of each uniqueness constraint,
/// kept in the commit's own LMDB transaction, so that two commits racing for one value
/// cannot both land (Docs/store-layout.md, "unique").
///
/// One entry per object and constraint it is held to, while none of the constraint's
/// values is `nil`: `entity u16 · constraint u16 · 00 · values` → the object, u64 BE
/// (`01 · SHA-256 of the values` in place of `00 · values` when they are longer than
/// ``longest`` bytes, which an LMDB key cannot be). The keys an object held before a commit
/// are worked out from its values before the commit (the projector keeps them), so no
/// entry maps objects back to their keys.
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

  /// Keys by constraint (``Model/uniqueness`` of the object's entity, in order), `nil` for a
  /// constraint the object is not held to.
  typealias Keys = [[UInt8]?]

  /// An object whose entries are brought up to date: the keys it held before (empty for an
  /// object that held none) and holds now, and its values (for the message of a refusal).
  struct Item {
    let id: ObjectID
    let entity: EntityID
    let old: Keys
    let new: Keys
    let value: ((PropertyID) throws -> Value?)?
  }

  /// The keys of an object of `entity` with these values (`nil` values: a deleted object).
  func keys(_ entity: EntityID, values: ((PropertyID) throws -> Value?)?) throws -> Keys {
    try model.uniqueness[Int(entity.rawValue)].map { c in try values.flatMap { try Self.key(c, values: $0) } }
  }

  /// Takes back the entries of the objects' old values, then puts those of their new ones,
  /// so that values exchanged within one commit do not collide.
  ///
  /// - Throws: ``ErrorCode/notUnique`` for a
  ///   value another object holds.
  func update(_ items: [Item], name: (ObjectID) -> StoreError.ObjectName) throws {
    var puts: [(item: Item, constraint: UniquenessConstraint, key: [UInt8])] = []
    for item in items {
      for (i, c) in model.uniqueness[Int(item.entity.rawValue)].enumerated() {
        let (old, new) = (i < item.old.count ? item.old[i] : nil, item.new[i])
        if old == new { continue }
        if let old { try txn.delete(db, key: old) }
        if let new { puts.append((item, c, new)) }
      }
    }
    for p in puts {
      guard try txn.put(db, key: p.key, value: BigEndianKey(p.item.id.rawValue), flags: .noOverwrite) else {
        let holder = try txn.get(db, key: p.key).flatMap { b in b.withUnsafeBytes { KeyField.u64($0, at: 0) } }
        let values = try p.constraint.attributes.map { try p.item.value?($0.id) }
        throw StoreError.notUnique(
          object: name(p.item.id), entity: p.constraint.entityName, attributes: p.constraint.attributes.map(\.name),
          value: Self.text(values), holder: name(ObjectID(holder ?? 0)))
      }
    }
  }

  /// The key of the tuple of values an object holds, `nil` when any of them is `nil`.
  ///
  /// Built in one buffer: a key is made for every object a commit touches.
  static func key(_ c: UniquenessConstraint, values: (PropertyID) throws -> Value?) throws -> [UInt8]? {
    var key: [UInt8] = []
    key.reserveCapacity(128)
    let (e, i) = (c.entity.rawValue, UInt16(c.index))
    key += [UInt8(e >> 8), UInt8(truncatingIfNeeded: e), UInt8(i >> 8), UInt8(truncatingIfNeeded: i), 0]
    for a in c.attributes {
      // A personal value without its blind hash (an erased subject's) holds no key.
      guard let v = try values(a.id), IndexKey.isKeyed(v) else { return nil }
      appendExact(v, to: &key)
    }
    if key.count - 5 > longest {
      let digest = SHA256.digest(key[5...])
      key.removeSubrange(4...)
      key.append(1)
      key += digest
    }
    return key
  }

  /// Appends a value's length (u32 BE) and bytes, equal exactly when the values are equal.
  static func appendExact(_ v: Value, to key: inout [UInt8]) {
    func length(_ n: Int) {
      for s in stride(from: 24, through: 0, by: -8) { key.append(UInt8(truncatingIfNeeded: n >> s)) }
    }
    func be(_ n: UInt64) {
      length(8)
      for s in stride(from: 56, through: 0, by: -8) { key.append(UInt8(truncatingIfNeeded: n >> UInt64(s))) }
    }
    func bytes(_ b: some Collection<UInt8>) {
      length(b.count)
      key.append(contentsOf: b)
    }
    switch v {
    case .int16(let n): be(UInt64(bitPattern: Int64(n)))
    case .int32(let n): be(UInt64(bitPattern: Int64(n)))
    case .int64(let n): be(UInt64(bitPattern: n))
    case .double(let d): be((d == 0 ? 0 : d).bitPattern)
    case .float(let f): be(Double(f == 0 ? 0 : f).bitPattern)
    case .decimal(let d): bytes(d.description.utf8)
    case .date(let d): be(d.timeIntervalSince1970.bitPattern)
    case .boolean(let b): bytes([b ? 1 : 0])
    case .uuid(let u):
      let t = u.uuid
      bytes([t.0, t.1, t.2, t.3, t.4, t.5, t.6, t.7, t.8, t.9, t.10, t.11, t.12, t.13, t.14, t.15])
    case .string(let s): bytes(UnicodeText.precomposed(s).utf8)
    case .uri(let s): bytes(s.utf8)
    case .binary(let b): bytes(b)
    case .sealed(let s): bytes(s.blindHash)
    }
  }

  /// The values as a message shows them: `'momo'`, or `('A', 7)` for several.
  private static func text(_ values: [Value?]) -> String {
    let shown = values.map { $0?.displayText ?? "nil" }
    return shown.count == 1 ? shown[0] : "(" + shown.joined(separator: ", ") + ")"
  }
}
