internal import CNATS
import Foundation

/// A message to publish to a JetStream stream.
public struct OutgoingMessage: Sendable, Hashable {
  public var subject: String
  /// Its ID for the stream's deduplication (`Nats-Msg-Id`): a retry with the same ID is
  /// stored once, and answered as a duplicate with the first one's sequence.
  public var id: String
  public var headers: [String: String]
  public var data: [UInt8]

  public init(subject: String, id: String, headers: [String: String] = [:], data: [UInt8]) {
    self.subject = subject
    self.id = id
    self.headers = headers
    self.data = data
  }
}

/// A message as a stream stored it.
public struct StoredMessage: Sendable, Hashable {
  public let subject: String
  /// Its place in the stream, from 1.
  public let sequence: UInt64
  public let headers: [String: String]
  public let data: [UInt8]
}

/// JetStream's answer to a publish.
public struct PublishAck: Sendable, Hashable {
  /// The message's place in the stream.
  public let sequence: UInt64
  /// The stream held a message with this ID already (``sequence`` is that one's).
  public let duplicate: Bool
}

/// A stream's configuration and state.
public struct StreamState: Sendable, Hashable {
  public let name: String
  public let subjects: [String]
  public let replicas: Int
  public let messages: UInt64
  /// The last message's sequence; 0 for an empty stream.
  public let lastSequence: UInt64
  /// The name of the server that leads the stream's replicas now, when it has one.
  public let leader: String?
}

extension StoredMessage {
  /// Copies a message that nats.c returned; `msg` stays the caller's to destroy.
  init(copying msg: OpaquePointer, sequence: UInt64) {
    let subject = natsMsg_GetSubject(msg).map { String(cString: $0) } ?? ""
    let length = Int(natsMsg_GetDataLength(msg))
    var data: [UInt8] = []
    if length > 0, let bytes = natsMsg_GetData(msg) {
      // natsMsg_GetData points at the message's `length` bytes, alive until it is destroyed.
      data = bytes.withMemoryRebound(to: UInt8.self, capacity: length) {
        Array(UnsafeBufferPointer(start: $0, count: length))
      }
    }
    var headers: [String: String] = [:]
    var keys: UnsafeMutablePointer<UnsafePointer<CChar>?>?
    var count: Int32 = 0
    if natsMsgHeader_Keys(msg, &keys, &count) == NATS_OK, let keys {
      // natsMsgHeader_Keys gives an array of `count` keys that the caller frees (not the keys).
      for i in 0..<Int(count) {
        guard let key = keys[i] else { continue }
        var value: UnsafePointer<CChar>?
        if natsMsgHeader_Get(msg, key, &value) == NATS_OK, let value {
          headers[String(cString: key)] = String(cString: value)
        }
      }
      free(keys)
    }
    self.init(subject: subject, sequence: sequence, headers: headers, data: data)
  }
}
