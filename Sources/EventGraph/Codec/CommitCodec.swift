import Foundation
internal import LMDB

/// The binary form of a commit record, as stored in the log (see Docs/format.md).
///
/// ```
/// u8      format (1)
/// varint  commit number
/// varint  first sequence
/// zigzag  time, milliseconds since 1970
/// varint  model version
/// varint  metadata field count, then per field: varint tag, payload
/// varint  event count, then the events
/// u32 LE  CRC-32C of every byte before it
/// ```
enum CommitCodec {
  static let format: UInt8 = 1

  enum EventTag: UInt8 { case insert = 1, set, link, unlink, delete, erase }
  enum MetadataTag: UInt64 { case author = 1, correlationID, idempotencyKey, sourceCommit, clonedFrom, extra }

  static func encode(_ c: Commit) -> [UInt8] {
    var w = BinaryWriter(capacity: estimatedSize(of: c))
    header(c, into: &w)
    w.varint(UInt64(c.events.count))
    c.events.withUnsafeBufferPointer { events in
      // SAFETY: `events` is the array's storage, alive for this call; each event is read
      // in place (an `Array` subscript or a `for` loop copies it: a retain and a release).
      for i in events.indices { encode(events[i], into: &w) }
    }
    seal(&w)
    return w.bytes
  }

  /// Events encoded one by one as they are made, so that a large commit (a clone) need not
  /// hold them all as ``Event`` values first.
  struct EventBody {
    fileprivate var writer: BinaryWriter
    /// The number of events.
    private(set) var count = 0

    init(capacity: Int) { writer = BinaryWriter(capacity: capacity) }

    mutating func append(_ e: Event) {
      CommitCodec.encode(e, into: &writer)
      count += 1
    }
  }

  /// The record of a commit whose events are in `body` (the commit's own `events` are
  /// not used): the same bytes as ``encode(_:)`` of the commit with those events.
  static func encode(_ c: Commit, body: EventBody) -> [UInt8] {
    var w = BinaryWriter(capacity: 128 + body.writer.bytes.count)
    header(c, into: &w)
    w.varint(UInt64(body.count))
    w.bytes.append(contentsOf: body.writer.bytes)
    seal(&w)
    return w.bytes
  }

  /// Everything before the event count.
  private static func header(_ c: Commit, into w: inout BinaryWriter) {
    w.byte(format)
    w.varint(c.number)
    w.varint(c.firstSequence)
    w.zigzag(milliseconds(c.time))
    w.varint(UInt64(c.modelVersion))
    encode(c.metadata, into: &w)
  }

  /// Ends the record with its checksum.
  private static func seal(_ w: inout BinaryWriter) {
    let crc = w.bytes.withUnsafeBytes { CRC32C.checksum($0) }
    w.fixed32(crc)
  }

  /// About the size of a commit record, so that its buffer is allocated once rather than
  /// grown (and copied) while the events are written.
  static func estimatedSize(of c: Commit) -> Int {
    var n = 64 + c.metadata.extra.count * 32
    for i in c.events.indices {
      n += 32
      if case .set(_, _, let v) = c.events[i] { n += BinaryWriter.estimatedSize(of: v) }
    }
    return n
  }

  /// A time in whole milliseconds, rounded to the nearest, so that a decoded time
  /// (milliseconds / 1000 as a Double) encodes back to the same number.
  static func milliseconds(_ d: Date) -> Int64 {
    let ms = (d.timeIntervalSince1970 * 1000).rounded()
    // Clamped to the field's range, so that a time read from a record (as far as ±2^63 ms)
    // is written back as itself: 2^63 - 1 as a Double rounds up to 2^63, past `Int64.max`.
    if ms.isNaN { return 0 }
    if ms >= 9_223_372_036_854_775_808 { return .max }
    if ms <= -9_223_372_036_854_775_808 { return .min }
    return Int64(ms)
  }

  private static func encode(_ m: CommitMetadata, into w: inout BinaryWriter) {
    var fields = 0
    if m.author != nil { fields += 1 }
    if m.correlationID != nil { fields += 1 }
    if m.idempotencyKey != nil { fields += 1 }
    if m.sourceCommit != nil { fields += 1 }
    if m.clonedFrom != nil { fields += 1 }
    fields += m.extra.count
    w.varint(UInt64(fields))
    if let a = m.author {
      w.varint(MetadataTag.author.rawValue)
      w.string(a)
    }
    if let c = m.correlationID {
      w.varint(MetadataTag.correlationID.rawValue)
      w.string(c)
    }
    if let k = m.idempotencyKey {
      w.varint(MetadataTag.idempotencyKey.rawValue)
      w.string(k)
    }
    if let s = m.sourceCommit {
      w.varint(MetadataTag.sourceCommit.rawValue)
      w.varint(s)
    }
    if let o = m.clonedFrom {
      w.varint(MetadataTag.clonedFrom.rawValue)
      w.varint(o.rawValue)
    }
    // Sorted, so that the same metadata always encodes to the same bytes.
    for (k, v) in m.extra.sorted(by: { $0.key < $1.key }) {
      w.varint(MetadataTag.extra.rawValue)
      w.string(k)
      w.string(v)
    }
  }

  // Inlined into the loop of `encode(_:)`, which reads each event in place: called, it gets
  // a copy of the event (about 2% of a batched commit's instructions), since as far as the
  // compiler knows the writer could write where the event lies. Since `Event` moved to
  // EventGraphModel the optimizer no longer inlines it unasked.
  @inline(__always)
  static func encode(_ e: Event, into w: inout BinaryWriter) {
    switch e {
    case .insert(let o, let entity):
      w.byte(EventTag.insert.rawValue)
      w.varint(o.rawValue)
      w.varint(UInt64(entity.rawValue))
    case .set(let o, let attribute, let value):
      w.byte(EventTag.set.rawValue)
      w.varint(o.rawValue)
      w.varint(UInt64(attribute.rawValue))
      w.value(value)
    case .link(let o, let relationship, let target, let position):
      w.byte(EventTag.link.rawValue)
      w.varint(o.rawValue)
      w.varint(UInt64(relationship.rawValue))
      w.varint(target.rawValue)
      w.varint(position.map { UInt64($0) + 1 } ?? 0)
    case .unlink(let o, let relationship, let target):
      w.byte(EventTag.unlink.rawValue)
      w.varint(o.rawValue)
      w.varint(UInt64(relationship.rawValue))
      w.varint(target.rawValue)
    case .delete(let o):
      w.byte(EventTag.delete.rawValue)
      w.varint(o.rawValue)
    case .erase(let o, let reason):
      w.byte(EventTag.erase.rawValue)
      w.varint(o.rawValue)
      w.string(reason ?? "")
    }
  }

  /// Checks the record's checksum without decoding it.
  static func checksumMatches(_ bytes: UnsafeRawBufferPointer) -> Bool {
    guard bytes.count >= 5, let stored = bytes.integer(UInt32.self, at: bytes.count - 4, .littleEndian) else {
      return false
    }
    let body = UnsafeRawBufferPointer(rebasing: bytes[..<(bytes.count - 4)])
    return CRC32C.checksum(body) == stored
  }

  /// Decodes a commit record, checking its checksum first.
  ///
  /// - Parameter context: names the record in errors ("log entry 12").
  static func decode(_ bytes: UnsafeRawBufferPointer, context: String, verifyChecksum: Bool = true)
    throws(CorruptionError) -> Commit
  {
    var reader = try EventReader(bytes, context: context, verifyChecksum: verifyChecksum)
    var events: [Event] = []
    events.reserveCapacity(reader.eventCount)
    while let e = try reader.next() { events.append(e) }
    var commit = reader.header
    commit.events = events
    return commit
  }

  /// Decodes only what precedes the metadata and the event count, without the checksum.
  static func decodeHeader(_ bytes: UnsafeRawBufferPointer, context: String) throws(CorruptionError)
    -> (number: UInt64, firstSequence: UInt64, eventCount: UInt64)
  {
    var r = BinaryReader(bytes)
    do throws(CorruptionError) {
      let f = try r.byte()
      guard f == format else { throw r.failure("unknown commit format \(f)") }
      let number = try r.varint()
      let first = try r.varint()
      _ = try r.zigzag()
      _ = try r.varint()
      _ = try decodeMetadata(&r)
      return (number, first, try r.varint())
    } catch {
      var e = error
      e.context = context
      throw e
    }
  }

  static func decodeMetadata(_ r: inout BinaryReader) throws(CorruptionError) -> CommitMetadata {
    var m = CommitMetadata()
    let n = try r.int()
    for _ in 0..<n {
      let raw = try r.varint()
      guard let tag = MetadataTag(rawValue: raw) else { throw r.failure("unknown metadata field \(raw)") }
      switch tag {
      case .author: m.author = try r.string()
      case .correlationID: m.correlationID = try r.string()
      case .idempotencyKey: m.idempotencyKey = try r.string()
      case .sourceCommit: m.sourceCommit = try r.varint()
      case .clonedFrom: m.clonedFrom = ObjectID(try r.varint())
      case .extra:
        let k = try r.string()
        m.extra[k] = try r.string()
      }
    }
    return m
  }

  static func decodeEvent(_ r: inout BinaryReader) throws(CorruptionError) -> Event {
    let raw = try r.byte()
    guard let tag = EventTag(rawValue: raw) else { throw r.failure("unknown event kind \(raw)") }
    let object = ObjectID(try r.varint())
    switch tag {
    case .insert:
      return .insert(object, entity: EntityID(rawValue: UInt16(try r.int(max: UInt64(UInt16.max)))))
    case .set:
      let p = PropertyID(rawValue: UInt16(try r.int(max: UInt64(UInt16.max))))
      return .set(object, attribute: p, value: try r.value())
    case .link:
      let p = PropertyID(rawValue: UInt16(try r.int(max: UInt64(UInt16.max))))
      let target = ObjectID(try r.varint())
      let pos = try r.int()
      return .link(object, relationship: p, target: target, position: pos == 0 ? nil : pos - 1)
    case .unlink:
      let p = PropertyID(rawValue: UInt16(try r.int(max: UInt64(UInt16.max))))
      return .unlink(object, relationship: p, target: ObjectID(try r.varint()))
    case .delete:
      return .delete(object)
    case .erase:
      let reason = try r.string()
      return .erase(object, reason: reason.isEmpty ? nil : reason)
    }
  }
}
