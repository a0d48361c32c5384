import Foundation

/// One change to the object graph.
///
/// The events of one save form a ``Commit``.
///
/// Inverses are never written twice: a `link` is one event and the projection maintains
/// both sides. Effects of delete rules and of moving a to-one are explicit events of their
/// own (an `unlink` before the `link` or `delete`), so a replay needs no model logic.
public enum Event: Sendable, Hashable {
  case insert(ObjectID, entity: EntityID)
  case set(ObjectID, attribute: PropertyID, value: Value?)
  /// Adds `target` to the relationship; `position` is the index in an ordered
  /// relationship (`nil`: at the end).
  case link(ObjectID, relationship: PropertyID, target: ObjectID, position: Int?)
  case unlink(ObjectID, relationship: PropertyID, target: ObjectID)
  case delete(ObjectID)
  /// The erasure of a subject's personal data (Docs/privacy.md): its data key was
  /// destroyed in the same commit, so every value sealed under it is unreadable from then
  /// on, in every copy of the log. Holds why, never any of the data.
  case erase(ObjectID, reason: String?)

  /// The object the event is about.
  public var object: ObjectID {
    switch self {
    case .insert(let o, _), .set(let o, _, _), .link(let o, _, _, _), .unlink(let o, _, _), .delete(let o),
      .erase(let o, _):
      o
    }
  }

  /// The name of the event's kind, as in the JSON form.
  public var kindName: String {
    switch self {
    case .insert: "insert"
    case .set: "set"
    case .link: "link"
    case .unlink: "unlink"
    case .delete: "delete"
    case .erase: "erase"
    }
  }
}

/// The metadata of a commit: who, why, and where it came from.
public struct CommitMetadata: Sendable, Hashable {
  public var author: String?
  public var correlationID: String?
  /// A key that makes a retried commit land once.
  public var idempotencyKey: String?
  /// For upcast output: the source commit (its first sequence) this commit came from.
  public var sourceCommit: UInt64?
  /// For a clone: the root object that was copied.
  public var clonedFrom: ObjectID?
  /// Anything else, kept as given.
  public var extra: [String: String]
  /// For the base of a truncated log: what it stands for (Docs/retention.md).
  public var base: HistoryBase?

  public init(
    author: String? = nil, correlationID: String? = nil, idempotencyKey: String? = nil,
    sourceCommit: UInt64? = nil, clonedFrom: ObjectID? = nil, extra: [String: String] = [:],
    base: HistoryBase? = nil
  ) {
    self.author = author
    self.correlationID = correlationID
    self.idempotencyKey = idempotencyKey
    self.sourceCommit = sourceCommit
    self.clonedFrom = clonedFrom
    self.extra = extra
    self.base = base
  }

  public var isEmpty: Bool { self == CommitMetadata() }
}

/// The events of one save, appended to the log atomically.
public struct Commit: Sendable, Hashable {
  /// The commit's number, 1 for the first commit of a log.
  public var number: UInt64
  /// The sequence of the first event; events are numbered consecutively from it.
  public var firstSequence: UInt64
  /// When the commit was made (millisecond precision).
  public var time: Date
  /// The model version the events are written in.
  public var modelVersion: Int
  public var metadata: CommitMetadata
  public var events: [Event]

  public init(
    number: UInt64, firstSequence: UInt64, time: Date, modelVersion: Int, metadata: CommitMetadata = .init(),
    events: [Event]
  ) {
    self.number = number
    self.firstSequence = firstSequence
    self.time = time
    self.modelVersion = modelVersion
    self.metadata = metadata
    self.events = events
  }

  /// The sequence of the last event (equal to `firstSequence - 1` for an empty commit); for
  /// a base, the last sequence it stands for (``HistoryBase/lastSequence``).
  public var lastSequence: UInt64 { metadata.base?.lastSequence ?? firstSequence + UInt64(events.count) - 1 }

  /// Each event with its sequence number.
  public var sequencedEvents: some Sequence<(sequence: UInt64, event: Event)> {
    events.enumerated().lazy.map { (firstSequence + UInt64($0.offset), $0.element) }
  }
}
