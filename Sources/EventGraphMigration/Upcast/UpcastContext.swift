import EventGraph
import LMDB

/// The source graph of an upcast, as it is after the current source commit: a scratch
/// projection of the source version, kept on disk beside the store, never the whole graph
/// in memory.
///
/// It lives for one source commit's migration, after the commit's events were applied, and
/// remembers the last object read: the mappings' expressions read one object's attributes
/// one after the other.
final class SourceGraph: QueryObjectSource {
  let projector: Projector
  private var recent: ObjectState?

  init(projector: Projector) { self.projector = projector }

  /// The object's state after the commit; `nil` when it does not exist.
  func state(_ object: ObjectID) throws -> ObjectState? {
    if let r = recent, r.id == object { return r }
    let s = try projector.state(object)
    if s != nil { recent = s }
    return s
  }

  func value(of object: ObjectID, attribute: PropertyID) throws -> Value? {
    try state(object)?[attribute]
  }

  func related(to object: ObjectID, relationship: PropertyID) throws -> [ObjectID] {
    try projector.reader.related(object, relationship)
  }
}

/// Association of (mapping, source object, key) with the destination object it made,
/// stored in LMDB both ways, so memory stays bounded however long the log.
struct Associations {
  let txn: WriteHandle
  /// mapping u16 · source u64 · key bytes → destination u64.
  let forward: Database
  /// destination u64 → mapping u16 · source u64 · key bytes.
  let reverse: Database

  static func prefix(_ mapping: Int, _ source: ObjectID) -> [UInt8] {
    var k: [UInt8] = [UInt8(truncatingIfNeeded: mapping >> 8), UInt8(truncatingIfNeeded: mapping)]
    for i in (0..<8).reversed() { k.append(UInt8(truncatingIfNeeded: source.rawValue >> (8 * UInt64(i)))) }
    return k
  }

  /// The destinations made from `source` by `mapping`, in key order.
  func destinations(mapping: Int, source: ObjectID) throws -> [(String, ObjectID)] {
    let p = Self.prefix(mapping, source)
    var result: [(String, ObjectID)] = []
    try txn.forEach(forward, from: p) { k, v in
      guard k.count >= p.count, k.starts(with: p), let d = BigEndianKey.decode(v) else { return false }
      result.append((String(decoding: k[p.count...], as: UTF8.self), ObjectID(d)))
      return true
    }
    return result
  }

  /// The (mapping, source) a destination object was made from.
  func source(of destination: ObjectID) throws -> (mapping: Int, source: ObjectID)? {
    guard let v = try txn.get(reverse, key: BigEndianKey(destination.rawValue)), v.count >= 10 else { return nil }
    let mapping = Int(v[0]) << 8 | Int(v[1])
    var s: UInt64 = 0
    for b in v[2..<10] { s = s << 8 | UInt64(b) }
    return (mapping, ObjectID(s))
  }

  func add(mapping: Int, source: ObjectID, key: String, destination: ObjectID) throws {
    let k = Self.prefix(mapping, source) + Array(key.utf8)
    try txn.put(forward, key: k, value: BigEndianKey(destination.rawValue))
    try txn.put(reverse, key: BigEndianKey(destination.rawValue), value: k)
  }

  func remove(mapping: Int, source: ObjectID, key: String, destination: ObjectID) throws {
    try txn.delete(forward, key: Self.prefix(mapping, source) + Array(key.utf8))
    try txn.delete(reverse, key: BigEndianKey(destination.rawValue))
  }
}

/// Everything one source commit's migration works with.
final class UpcastContext {
  let source: SourceGraph
  let associations: Associations
  let sourceModel: Model
  /// The destination transaction of the current source commit.
  var destination: Transaction

  init(source: SourceGraph, associations: Associations, sourceModel: Model, destination: Transaction) {
    self.source = source
    self.associations = associations
    self.sourceModel = sourceModel
    self.destination = destination
  }

  /// The live source object with this identity, or `nil` when it does not exist (now).
  func sourceObject(_ id: ObjectID) throws -> SourceObject? {
    try source.state(id).map { SourceObject(id: id, entity: $0.entity) }
  }
}
