import EventGraph
import Foundation
import NATSClient

/// A refusal of replication: each names the stream and what is wrong; the local store is
/// left as it was.
public struct ReplicationError: RemediedError, Sendable, Hashable {
  public typealias Code = ErrorCode<ReplicationError>

  public let code: Code
  public let stream: String
  public let sequence: UInt64?
  public let detail: String
  /// What a user can do, if anything.
  public internal(set) var remedy: Remedy? = nil

  public var problem: String {
    let at = sequence.map { " at sequence \($0)" } ?? ""
    return "stream '\(stream)'\(at): \(detail)"
  }

  static func otherStore(stream: String, found: String, expected: String) -> Self {
    .init(
      code: .otherStore, stream: stream, sequence: 1,
      detail: "it belongs to store \(found), not to this store (\(expected))")
  }

  static func badMessage(stream: String, sequence: UInt64, detail: String) -> Self {
    .init(code: .badMessage, stream: stream, sequence: sequence, detail: detail)
  }

  static func fenced(stream: String, sequence: UInt64?, detail: String) -> Self {
    .init(code: .fenced, stream: stream, sequence: sequence, detail: "fenced: \(detail)")
  }

  static func wrongRole(stream: String, detail: String) -> Self {
    .init(code: .wrongRole, stream: stream, sequence: nil, detail: detail)
  }

  static func noStream(stream: String, detail: String) -> Self {
    .init(code: .noStream, stream: stream, sequence: nil, detail: detail)
  }

  static func diverged(stream: String, detail: String) -> Self {
    .init(code: .diverged, stream: stream, sequence: nil, detail: detail)
  }

  static func unauthenticated(stream: String, _ message: StoredMessage) -> Self {
    let kind = message.headers[StreamLayout.Header.kind] ?? "unknown"
    let member = message.headers[StreamLayout.Header.member].map { " as member \($0)" } ?? ""
    return .init(
      code: .unauthenticated, stream: stream, sequence: message.sequence,
      detail:
        "the \(kind) message published\(member) carries no tag the writers' key verifies: a client without the key published it, and nothing of it was applied"
    )
  }

  static func leaseHeld(stream: String, holder: LeaseHolder?) -> Self {
    let who = holder.map { "member \($0.member)" + ($0.address.map { " (\($0))" } ?? "") } ?? "another member"
    return .init(
      code: .leaseHeld, stream: stream, sequence: nil,
      detail: "\(who) holds the primary's lease: it is the primary; this store may write only once that lease lapses")
  }

  static func stopped(stream: String) -> Self {
    .init(
      code: .stopped, stream: stream, sequence: nil, detail: "replication stopped before the commit reached the stream")
  }
}

// MARK: - The codes

extension ErrorCode where Domain == ReplicationError {
  /// The stream belongs to another store.
  public static var otherStore: Self { Self("otherStore") }
  /// A message of the stream cannot be read: out of place, of an unknown kind, or a
  /// record whose checksum fails.
  public static var badMessage: Self { Self("badMessage") }
  /// Another member published to the stream: this one is no longer the primary.
  public static var fenced: Self { Self("fenced") }
  /// The store has no part in this stream, or not the one asked for.
  public static var wrongRole: Self { Self("wrongRole") }
  /// The stream does not exist, or is empty.
  public static var noStream: Self { Self("noStream") }
  /// The store and the stream disagree about a version's log.
  public static var diverged: Self { Self("diverged") }
  /// A message of the stream is not tagged by the writers' key (``StreamKey``): someone
  /// who does not hold it published it.
  public static var unauthenticated: Self { Self("unauthenticated") }
  /// The writers' key is missing, cannot be read, or is not the stream's.
  public static var streamKey: Self { Self("streamKey") }
  /// Another member holds the stream's lease (``LeaseHolder``): it is the primary.
  public static var leaseHeld: Self { Self("leaseHeld") }
  /// The replication was stopped.
  public static var stopped: Self { Self("stopped") }
}
