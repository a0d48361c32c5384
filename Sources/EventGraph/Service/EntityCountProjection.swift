/// A projection that counts the live objects of each entity — the example projection that
/// `eventtool` knows (`eventtool rebuild STORE --projection entity-counts`), and a model
/// for your own: it keeps everything it needs in its own database, so a rebuild from the
/// log reproduces it byte for byte.
///
/// Entries: `0x01 · object u64 BE → entity u16 BE` for every live object (a delete event
/// names only the object), and `0x02 · entity u16 BE → count u64 BE`.
public struct EntityCountProjection: Projection {
  public let name = "entity-counts"

  public init() {}

  public func apply(_ commit: Commit, to storage: ProjectionStorage) throws {
    for event in commit.events {
      switch event {
      case .insert(let o, let entity):
        try storage.put(Self.objectKey(o), Self.bytes(UInt64(entity.rawValue), width: 2))
        try adjust(entity.rawValue, by: 1, in: storage)
      case .delete(let o):
        guard let value = try storage.get(Self.objectKey(o)), value.count == 2 else { continue }
        try storage.delete(Self.objectKey(o))
        try adjust(UInt16(value[0]) << 8 | UInt16(value[1]), by: -1, in: storage)
      case .set, .link, .unlink, .erase:
        continue
      }
    }
  }

  private func adjust(_ entity: UInt16, by delta: Int, in storage: ProjectionStorage) throws {
    let key = Self.countKey(entity)
    let current = try storage.get(key).map(Self.number) ?? 0
    let next = max(0, Int(current) + delta)
    if next == 0 {
      try storage.delete(key)
    } else {
      try storage.put(key, Self.bytes(UInt64(next), width: 8))
    }
  }

  /// The counts held by the projection, by entity name (entities without objects are left out).
  public static func counts(in view: ProjectionView, model: Model) throws -> [String: Int] {
    var result: [String: Int] = [:]
    try view.forEach(from: [0x02]) { key, value in
      guard key.count == 3, key[0] == 0x02 else { return false }
      let id = EntityID(rawValue: UInt16(key[1]) << 8 | UInt16(key[2]))
      result[model.entity(id)?.name ?? "#\(id.rawValue)"] = Int(number(value))
      return true
    }
    return result
  }

  // MARK: - Encoding

  private static func objectKey(_ o: ObjectID) -> [UInt8] { [0x01] + bytes(o.rawValue, width: 8) }
  private static func countKey(_ e: UInt16) -> [UInt8] { [0x02] + bytes(UInt64(e), width: 2) }

  private static func bytes(_ v: UInt64, width: Int) -> [UInt8] {
    (0..<width).map { UInt8(truncatingIfNeeded: v >> (8 * UInt64(width - 1 - $0))) }
  }

  private static func number(_ b: [UInt8]) -> UInt64 { b.reduce(0) { $0 << 8 | UInt64($1) } }
}
