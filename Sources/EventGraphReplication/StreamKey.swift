internal import EventGraphCrypto
import NATSClient

/// The writers' key of a stream: every message a writer of the store publishes carries a
/// tag made with it (HMAC-SHA-512-256, Docs/replication.md, "Who may write the stream"),
/// and a replica applies only messages whose tag it verifies.
///
/// The checksums of commit records prove a message whole and in order, not who made it;
/// the tag does: a client that can publish to the cluster but does not hold the key cannot
/// make a message that a replica accepts. Every member that may write — the primary and
/// each replica that may be promoted — holds the same key, a file of 32 random bytes of
/// mode 0600 (`eventtool keygen`, `EventStore.generateKeyFile(at:)`), kept apart from the
/// stores. A stream is authenticated from its genesis message on, or not at all.
///
/// ```swift
/// let key = try StreamKey(file: "/etc/eventgraph/orders.stream-key")
/// let shipper = try Shipper(store: store, jetStream: js, key: key)
/// ```
public struct StreamKey: Sendable {
  let key: SymmetricKey
  /// 16 hex digits that name the key without revealing it; the genesis message of a
  /// stream it authenticates carries them.
  public let fingerprint: String

  /// Loads the key in `file`.
  ///
  /// - Throws: ``EventGraphModel/ErrorCode/streamKey`` when the file is missing, is not 32
  ///   bytes, or lets its group or others read it.
  public init(file: String) throws(ReplicationError) {
    do {
      key = try KeyFile.load(from: file)
    } catch {
      throw ReplicationError(code: .streamKey, stream: "", sequence: nil, detail: error.message)
    }
    fingerprint = key.fingerprint
  }

  init(_ key: SymmetricKey) {
    self.key = key
    fingerprint = key.fingerprint
  }

  /// Adds the tag header to `message`.
  func sign(_ message: inout OutgoingMessage) {
    let bytes = Self.tagged(subject: message.subject, id: message.id, headers: message.headers, data: message.data)
    message.headers[StreamLayout.Header.tag] = Self.hex(MessageTag.tag(bytes, key: key))
  }

  /// Whether `message` carries this key's tag.
  func verifies(_ message: StoredMessage) -> Bool {
    guard let found = message.headers[StreamLayout.Header.tag], let tag = Self.unhex(found) else { return false }
    let id = message.headers["Nats-Msg-Id"] ?? ""
    return MessageTag.verify(
      tag, of: Self.tagged(subject: message.subject, id: id, headers: message.headers, data: message.data), key: key)
  }

  /// What a message's tag covers: its subject, ID, EventGraph headers (`EG-`, but the tag's
  /// own) in the order of their names, and data, each with its length before it, after a
  /// label that keeps these tags apart from any other use of the key.
  static func tagged(subject: String, id: String, headers: [String: String], data: [UInt8]) -> [UInt8] {
    var bytes = Array("EventGraph stream message 1".utf8)
    func field(_ value: some Collection<UInt8>) {
      let n = UInt32(value.count)
      bytes += [UInt8(n >> 24), UInt8((n >> 16) & 0xff), UInt8((n >> 8) & 0xff), UInt8(n & 0xff)]
      bytes += value
    }
    field(Array(subject.utf8))
    field(Array(id.utf8))
    for (name, value) in headers.sorted(by: { $0.key < $1.key })
    where name.hasPrefix("EG-") && name != StreamLayout.Header.tag {
      field(Array(name.utf8))
      field(Array(value.utf8))
    }
    field(data)
    return bytes
  }

  static func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef")
    return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
  }

  static func unhex(_ text: String) -> [UInt8]? {
    let chars = Array(text.utf8)
    guard chars.count % 2 == 0 else { return nil }
    func digit(_ c: UInt8) -> UInt8? {
      switch c {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
      default: nil
      }
    }
    var out: [UInt8] = []
    for i in stride(from: 0, to: chars.count, by: 2) {
      guard let high = digit(chars[i]), let low = digit(chars[i + 1]) else { return nil }
      out.append(high << 4 | low)
    }
    return out
  }
}

extension StreamLayout {
  /// Checks that `key` is the key of the stream whose genesis message is `genesis`: both
  /// or neither, the same fingerprint, and the genesis message tagged by it.
  static func checkKey(_ key: StreamKey?, genesis: StoredMessage, stream: String) throws(ReplicationError) {
    let recorded = genesis.headers[Header.key]
    switch (recorded, key) {
    case (nil, nil): return
    case (.some(let fingerprint), nil):
      throw ReplicationError(
        code: .streamKey, stream: stream, sequence: nil,
        detail: "its messages are authenticated by the writers' key \(fingerprint): give that key")
    case (nil, .some(let key)):
      throw ReplicationError(
        code: .streamKey, stream: stream, sequence: nil,
        detail:
          "it was made without a writers' key, so its messages carry no tags to check with key \(key.fingerprint): a key is given to a stream from its genesis on"
      )
    case (.some(let fingerprint), .some(let key)):
      guard fingerprint == key.fingerprint else {
        throw ReplicationError(
          code: .streamKey, stream: stream, sequence: nil,
          detail: "its writers' key is \(fingerprint); the key given is \(key.fingerprint)")
      }
      guard key.verifies(genesis) else { throw ReplicationError.unauthenticated(stream: stream, genesis) }
    }
  }
}
