import EventGraph
import Foundation
import NATSClient

/// How a store's log travels in a JetStream stream (Docs/replication.md, "The stream").
///
/// Messages, in stream order:
///
/// | subject | kind | what it carries |
/// |---|---|---|
/// | `eg.S.genesis` | `genesis` | the store's identity; first, once |
/// | `eg.S.vN.model` | `model` | model version N's document, before its first commits |
/// | `eg.S.vN.commits` | `commits` | consecutive commit records of version N, byte for byte |
/// | `eg.S.vN.base` | `base` | version N's log was truncated: its base record, byte for byte |
/// | `eg.S.switch` | `switch` | version N became the active one |
/// | `eg.S.promote` | `promote` | another member took over as primary |
///
/// Every message names the store (`EG-Store`) and the member that published it
/// (`EG-Member`); in a stream with a writers' key every message carries its tag (`EG-Tag`)
/// and the genesis message the key's fingerprint (`EG-Key`); every publish is fenced by the stream's expected last sequence, so the
/// stream has one writer at a time and is an exact copy of the log.
///
/// A base message follows the commits its base stands for; the commits after its cut
/// follow it again (published anew, with IDs that name the base), and the version's
/// commit messages before it are then purged: the stream's only gaps lie before a base,
/// and a replica that meets one goes on at the next message the stream holds.
enum StreamLayout {
  enum Kind: String {
    case genesis, model, commits, base, switchVersion = "switch", promote
  }

  enum Header {
    static let kind = "EG-Kind"
    static let store = "EG-Store"
    static let member = "EG-Member"
    static let version = "EG-Version"
    static let first = "EG-First"
    static let last = "EG-Last"
    /// The message's tag under the writers' key (``StreamKey``), 64 hex digits.
    static let tag = "EG-Tag"
    /// The writers' key's fingerprint, on the genesis message of an authenticated stream.
    static let key = "EG-Key"
  }

  static func subjects(_ stream: String) -> [String] { ["eg.\(stream).>"] }
  static func genesis(_ stream: String) -> String { "eg.\(stream).genesis" }
  static func model(_ stream: String, version: Int) -> String { "eg.\(stream).v\(version).model" }
  static func commits(_ stream: String, version: Int) -> String { "eg.\(stream).v\(version).commits" }
  static func base(_ stream: String, version: Int) -> String { "eg.\(stream).v\(version).base" }
  /// Every version's base messages.
  static func bases(_ stream: String) -> String { "eg.\(stream).*.base" }
  static func switchVersion(_ stream: String) -> String { "eg.\(stream).switch" }
  static func promote(_ stream: String) -> String { "eg.\(stream).promote" }

  /// The default stream of a store: `EG_` and its identity without dashes.
  static func defaultStream(storeID: String) -> String {
    "EG_" + storeID.filter { $0.isLetter || $0.isNumber }
  }

  /// Whether `name` can name a stream (and be part of a subject).
  static func isValidStreamName(_ name: String) -> Bool {
    !name.isEmpty && name.count <= 64
      && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
  }

  /// A message of `kind` published by `member` of store `store`, with its ID in the
  /// member's namespace (`STORE:MEMBER:ID`) and the headers every message carries; tagged by
  /// `key` when the stream has one.
  ///
  /// The member is in the ID because JetStream answers a publish whose ID it has stored
  /// within the deduplication window as a success, with the stored message's sequence, before
  /// it checks the expected last sequence: had two members the same IDs, a former primary's
  /// commit N would be acknowledged by the new primary's commit N, the fence never met.
  static func message(
    _ kind: Kind, subject: String, id: String, store: String, member: String, headers: [String: String] = [:],
    data: [UInt8] = [], key: StreamKey?
  ) -> OutgoingMessage {
    var all = headers
    all[Header.kind] = kind.rawValue
    all[Header.store] = store
    all[Header.member] = member
    var message = OutgoingMessage(subject: subject, id: "\(store):\(member):\(id)", headers: all, data: data)
    key?.sign(&message)
    return message
  }

  // MARK: - Commit records in a message

  /// Consecutive records, each as a 4-byte big-endian length and its bytes.
  static func pack(_ records: [CommitRecord]) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(records.reduce(0) { $0 + 4 + $1.bytes.count })
    for r in records {
      let n = UInt32(r.bytes.count)
      out += [UInt8(n >> 24), UInt8((n >> 16) & 0xff), UInt8((n >> 8) & 0xff), UInt8(n & 0xff)]
      out += r.bytes
    }
    return out
  }

  /// The records of a `commits` message, each checked by its checksum.
  static func unpack(_ data: [UInt8], sequence: UInt64, stream: String) throws -> [CommitRecord] {
    var records: [CommitRecord] = []
    var at = 0
    while at < data.count {
      guard data.count - at >= 4 else {
        throw ReplicationError.badMessage(stream: stream, sequence: sequence, detail: "a record's length is cut short")
      }
      let n = data[at..<at + 4].reduce(0) { $0 << 8 | Int($1) }
      at += 4
      guard n > 0, n <= data.count - at else {
        throw ReplicationError.badMessage(
          stream: stream, sequence: sequence, detail: "a record of \(n) bytes where \(data.count - at) remain")
      }
      do {
        records.append(try CommitRecord(bytes: Array(data[at..<at + n])))
      } catch {
        throw ReplicationError.badMessage(stream: stream, sequence: sequence, detail: "\(error)")
      }
      at += n
    }
    return records
  }
}

extension StoredMessage {
  var kind: StreamLayout.Kind? { headers[StreamLayout.Header.kind].flatMap(StreamLayout.Kind.init(rawValue:)) }
  var member: String { headers[StreamLayout.Header.member] ?? "" }
  var version: Int? { headers[StreamLayout.Header.version].flatMap { Int($0) } }
  var lastCommit: UInt64? { headers[StreamLayout.Header.last].flatMap { UInt64($0) } }
}
