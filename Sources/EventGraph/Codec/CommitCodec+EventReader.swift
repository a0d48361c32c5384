import Foundation

extension CommitCodec {
  /// A commit record read one event at a time: the header when it is made (after the
  /// checksum), then each event on demand.
  ///
  /// A replay applies every event as it is decoded, instead of collecting a commit's events
  /// in an array and copying each back out (a retain and a release of its value apiece).
  /// The reader points into `bytes`: it must not outlive them.
  struct EventReader {
    /// The commit, without its events.
    let header: Commit
    /// The number of events in the record.
    let eventCount: Int
    private var r: BinaryReader
    private var read = 0
    private let context: String

    /// Checks the checksum and decodes everything before the events.
    ///
    /// - Parameter context: names the record in errors ("log entry 12").
    init(_ bytes: UnsafeRawBufferPointer, context: String, verifyChecksum: Bool = true) throws(CorruptionError) {
      self.context = context
      do throws(CorruptionError) {
        if verifyChecksum && !checksumMatches(bytes) {
          throw CorruptionError(context: "", offset: max(0, bytes.count - 4), reason: "checksum mismatch")
        }
        var r = BinaryReader(UnsafeRawBufferPointer(rebasing: bytes[..<max(0, bytes.count - 4)]))
        let f = try r.byte()
        guard f == format else { throw r.failure("unknown commit format \(f)") }
        let number = try r.varint()
        let first = try r.varint()
        let ms = try r.zigzag()
        let version = try r.int()
        let metadata = try decodeMetadata(&r)
        let count = try r.int()
        guard count <= r.remaining else { throw r.failure("event count \(count) beyond the record") }
        self.r = r
        self.eventCount = count
        self.header = Commit(
          number: number, firstSequence: first, time: Date(timeIntervalSince1970: Double(ms) / 1000),
          modelVersion: version, metadata: metadata, events: [])
      } catch {
        var e = error
        e.context = context
        throw e
      }
    }

    /// The sequence of the record's last event; a base's own (``HistoryBase/lastSequence``).
    var lastSequence: UInt64 { header.metadata.base?.lastSequence ?? header.firstSequence + UInt64(eventCount) - 1 }

    /// The next event; `nil` after the last, once the record is checked to end there.
    mutating func next() throws(CorruptionError) -> Event? {
      do throws(CorruptionError) {
        guard read < eventCount else {
          guard r.isAtEnd else { throw r.failure("\(r.remaining) bytes after the last event") }
          return nil
        }
        read += 1
        return try decodeEvent(&r)
      } catch {
        var e = error
        e.context = context
        throw e
      }
    }
  }
}

extension CommitCodec {
  /// Reads a record held in an array through an ``EventReader``.
  ///
  /// - Throws: ``CorruptionError`` for a record that fails its checksum or does not
  ///   decode, and what `body` throws.
  static func read<R>(_ bytes: [UInt8], context: String, _ body: (inout EventReader) throws -> R) throws -> R {
    // SAFETY: the reader points into `bytes`, which live for this call; it is passed to
    // `body` inout and dropped when `body` returns.
    try bytes.withUnsafeBytes { raw in
      var reader = try EventReader(raw, context: context)
      return try body(&reader)
    }
  }
}
