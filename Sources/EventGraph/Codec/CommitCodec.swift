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
  enum MetadataTag: UInt64 { case author = 1, correlationID, idempotencyKey, sourceCommit, clonedFrom, extra, base }

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
    if m.base != nil { fields += 1 }
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
    if let b = m.base {
      w.varint(MetadataTag.base.rawValue)
      encode(b, into: &w)
    }
  }

  /// A base's field: last sequence, time of the truncation, then, after their length in
  /// bytes (so that a reader of the header alone skips them), the versions and deleted
  /// identities in identity order (each identity as the difference from the one before) and
  /// the order keys, u64 LE each.
  private static func encode(_ b: HistoryBase, into w: inout BinaryWriter) {
    w.varint(b.lastSequence)
    w.zigzag(milliseconds(b.truncatedAt))
    var bulk = BinaryWriter(capacity: 16 * (b.versions.count + b.deleted.count) + 8 * b.orderKeys.count + 8)
    bulk.varint(UInt64(b.versions.count))
    var previous: UInt64 = 0
    for (o, v) in b.versions.sorted(by: { $0.key < $1.key }) {
      bulk.varint(o.rawValue - previous)
      bulk.varint(v)
      previous = o.rawValue
    }
    bulk.varint(UInt64(b.deleted.count))
    previous = 0
    for (o, e) in b.deleted.sorted(by: { $0.key < $1.key }) {
      bulk.varint(o.rawValue - previous)
      bulk.varint(UInt64(e.rawValue))
      previous = o.rawValue
    }
    bulk.varint(UInt64(b.orderKeys.count))
    for k in b.orderKeys { bulk.fixed64(k) }
    w.lengthPrefixed(bulk.bytes)
  }

  /// A base's field; with `full` false, without its versions, deleted identities and order
  /// keys (a reader of the log's start that needs only where the base ends).
  private static func decodeBase(_ r: inout BinaryReader, full: Bool) throws(CorruptionError) -> HistoryBase {
    let last = try r.varint()
    let ms = try r.zigzag()
    var b = HistoryBase(lastSequence: last, truncatedAt: Date(timeIntervalSince1970: Double(ms) / 1000))
    let length = try r.int(max: UInt64(r.remaining))
    let end = r.offset + length
    guard full else {
      r.offset = end
      return b
    }
    func identity(after o: UInt64) throws(CorruptionError) -> UInt64 {
      let (next, overflow) = o.addingReportingOverflow(try r.varint())
      guard !overflow, next > o || o == 0 else { throw r.failure("base: identities out of order") }
      return next
    }
    let versions = try r.int(max: UInt64(length))
    b.versions.reserveCapacity(versions)
    var o: UInt64 = 0
    for _ in 0..<versions {
      o = try identity(after: o)
      b.versions[ObjectID(o)] = try r.varint()
    }
    let deleted = try r.int(max: UInt64(length))
    b.deleted.reserveCapacity(deleted)
    o = 0
    for _ in 0..<deleted {
      o = try identity(after: o)
      b.deleted[ObjectID(o)] = EntityID(rawValue: UInt16(try r.int(max: UInt64(UInt16.max))))
    }
    let keys = try r.int(max: UInt64(length / 8))
    b.orderKeys.reserveCapacity(keys)
    for _ in 0..<keys { b.orderKeys.append(try r.fixed64()) }
    guard r.offset == end else { throw r.failure("base: \(end - r.offset) bytes left in its field") }
    return b
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
  /// - Parameter context: names the record in errors ("log entry 12"); made only for one
  ///   (every reader of the log decodes each commit, and the text would cost as much as a
  ///   small commit's events).
  static func decode(_ bytes: UnsafeRawBufferPointer, context: @autoclosure () -> String, verifyChecksum: Bool = true)
    throws(CorruptionError) -> Commit
  {
    do throws(CorruptionError) {
      var reader = try EventReader(bytes, context: "", verifyChecksum: verifyChecksum)
      var events: [Event] = []
      events.reserveCapacity(reader.eventCount)
      while let e = try reader.next() { events.append(e) }
      var commit = reader.header
      commit.events = events
      return commit
    } catch {
      var e = error
      e.context = context()
      throw e
    }
  }

  /// What precedes a record's events.
  struct Head {
    var number: UInt64
    var firstSequence: UInt64
    var time: Date
    /// A base's without its versions, deleted identities and order keys.
    var metadata: CommitMetadata
    var eventCount: UInt64
    /// A base's own, else the event count's.
    var lastSequence: UInt64 { metadata.base?.lastSequence ?? firstSequence &+ eventCount &- 1 }
  }

  /// Decodes what precedes the events, without the checksum (see ``Head``).
  static func decodeHeader(_ bytes: UnsafeRawBufferPointer, context: @autoclosure () -> String) throws(CorruptionError)
    -> Head
  {
    var r = BinaryReader(bytes)
    do throws(CorruptionError) {
      let f = try r.byte()
      guard f == format else { throw r.failure("unknown commit format \(f)") }
      let number = try r.varint()
      let first = try r.varint()
      let ms = try r.zigzag()
      _ = try r.varint()
      let metadata = try decodeMetadata(&r, full: false)
      return Head(
        number: number, firstSequence: first, time: Date(timeIntervalSince1970: Double(ms) / 1000),
        metadata: metadata, eventCount: try r.varint())
    } catch {
      var e = error
      e.context = context()
      throw e
    }
  }

  /// - Parameter full: whether a base's versions, deleted identities and order keys are
  ///   read (``decodeHeader(_:context:)`` skips them).
  static func decodeMetadata(_ r: inout BinaryReader, full: Bool = true) throws(CorruptionError) -> CommitMetadata {
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
      case .base: m.base = try decodeBase(&r, full: full)
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
