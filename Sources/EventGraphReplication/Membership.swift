import EventGraph
import Foundation

/// A store's identity as a member of a stream: one per copy of a store (a primary and its
/// replicas share the store's identity, not their member IDs), made when the copy first
/// takes part and kept in its `replication.member` checkpoint.
enum Membership {
  static let memberCheckpoint = "replication.member"
  static let positionCheckpoint = "replication.position"

  /// This copy's member ID, made now when it has none.
  static func member(of store: EventStore) throws -> String {
    if let known = try knownMember(of: store) { return known }
    let made = UUID().uuidString
    try store.setCheckpoint(memberCheckpoint(made))
    return made
  }

  /// This copy's member ID, `nil` when it never took part (nothing is written: a read-only
  /// store can be asked).
  static func knownMember(of store: EventStore) throws -> String? {
    try store.checkpoint(named: memberCheckpoint).map { String(decoding: $0, as: UTF8.self) }
  }

  static func memberCheckpoint(_ id: String) -> Checkpoint { Checkpoint(name: memberCheckpoint, value: Array(id.utf8)) }

  /// The last stream sequence a replica applied (0 for none).
  static func position(of store: EventStore) throws -> UInt64 {
    try store.checkpoint(named: positionCheckpoint).flatMap { UInt64(String(decoding: $0, as: UTF8.self)) } ?? 0
  }

  static func position(_ sequence: UInt64) -> Checkpoint {
    Checkpoint(name: positionCheckpoint, value: Array(String(sequence).utf8))
  }
}
