import Foundation

/// What the base of a truncated log stands for: the commits before a cut, folded into one
/// commit that holds the object graph as they left it (Docs/retention.md).
///
/// A base is the first commit of its log. It has the number and the time of the last commit
/// it replaced and takes the place of the first (its key is the log's first sequence); its
/// events insert every object alive at the cut, set its values and link it, and are numbered
/// from its first sequence like any commit's, but they are not the events that once had those
/// numbers. The state as of ``lastSequence`` is the base's; reads as of an earlier sequence are
/// refused. Every commit after the base is the one that was there before the cut, byte for byte.
public struct HistoryBase: Sendable, Hashable {
  /// The last sequence the base stands for: the commit after it starts at the next.
  public var lastSequence: UInt64
  /// When the log was truncated (millisecond precision).
  public var truncatedAt: Date
  /// The version of each object alive at the cut: the first sequence of the last commit
  /// that touched it, which the object keeps.
  public var versions: [ObjectID: UInt64]
  /// The identities given before the cut to objects deleted before it, with their entities:
  /// an identity is never given again.
  public var deleted: [ObjectID: EntityID]
  /// The order key of each member of an ordered list, in the order of the base's `link`
  /// events (the source's list first, then the target's where the inverse is ordered too),
  /// so that every later insert between two members lands where it did before the cut.
  public var orderKeys: [UInt64]

  public init(
    lastSequence: UInt64, truncatedAt: Date, versions: [ObjectID: UInt64] = [:],
    deleted: [ObjectID: EntityID] = [:], orderKeys: [UInt64] = []
  ) {
    self.lastSequence = lastSequence
    self.truncatedAt = truncatedAt
    self.versions = versions
    self.deleted = deleted
    self.orderKeys = orderKeys
  }
}
