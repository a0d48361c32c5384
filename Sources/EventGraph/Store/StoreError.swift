internal import EventGraphText
import Foundation
internal import LMDB

/// Why the store refused an operation: what was wrong and where.
///
/// A struct rather than an enum, so that new kinds of refusal can be added without
/// breaking callers (GRDB's `DatabaseError` and `ResultCode` do the same). Match on the
/// ``code``; the ``context`` says where, in the shape that belongs to the code, and
/// ``object`` and ``property`` name the object and property at fault whatever the code:
///
/// ```swift
/// do {
///   try store.write { tx in try tx.set(book, "name", .string("")) }
/// } catch let e as StoreError where e.code == .validation {
///   if case .rule(let object, let property, let rule, let problem) = e.context {
///     print("\(object).\(property) broke \(rule): \(problem)")
///   }
/// }
/// ```
///
/// Only EventGraph makes these errors. Errors compare equal when their code, path and
/// context are equal.
public struct StoreError: RemediedError, Sendable, Hashable {
  /// What kind of refusal an error is; compare with the constants (`e.code == .readOnly`).
  public typealias Code = ErrorCode<StoreError>

  /// What kind of refusal this is.
  public let code: Code
  /// The store directory, for a refusal about a store as a whole (`nil` for one about an
  /// object, a property or the log, which the caller knows the store of).
  public let path: String?
  /// Where and what, in the shape that belongs to ``code`` (each case names its codes).
  public let context: Context
  /// The storage engine's own error, for ``ErrorCode/storage``.
  private let cause: LMDBError?

  init(_ code: Code, path: String? = nil, _ context: Context = .none) {
    self.code = code
    self.path = path
    self.context = context
    self.cause = nil
  }

  private init(storage cause: LMDBError, path: String) {
    self.code = .storage
    self.path = path
    self.context = .detail(cause.description)
    self.cause = cause
  }

  /// The error of the storage engine (LMDB) that made a ``ErrorCode/storage`` error, with
  /// its code; `nil` for every other code.
  public var underlying: (any Error)? { cause }

  /// What a user can do: a rebuild of damaged projections, an upgrade of an older
  /// format, a salvage of a damaged file, the promotion of a replica.
  public var remedy: Remedy? {
    let path = path ?? ""
    switch code {
    case .projectionDamaged: return .rebuild(path: path)
    case .olderFormat: return .upgrade(path: path)
    case .damaged: return .salvage(path: path)
    case .replica: return .promote(path: path)
    default: return nil
    }
  }

  public var problem: String {
    let path = path ?? ""
    switch (code, context) {
    case (.notAStore, .detail(let detail)): return "\(path) is not an EventGraph store: \(detail)"
    case (.alreadyExists, _): return "\(path) already holds a store"
    case (.newerFormat, .format(let found, let supported)):
      return
        "\(path) was written by a newer EventGraph (store format \(found); this version reads up to \(supported ?? 0))"
    case (.unknownEntity, .entity(let entity)): return "unknown entity '\(entity)'"
    case (.abstractEntity, .entity(let entity)): return "entity '\(entity)' is abstract and cannot be inserted"
    case (.unknownProperty, .unknownProperty(let entity, let property, let nearest)):
      return "entity '\(entity)' has no property '\(property)'" + (nearest.map { " (did you mean '\($0)'?)" } ?? "")
    case (.notAnAttribute, .property(let entity, let property)):
      return "\(entity).\(property) is a relationship, not an attribute"
    case (.notARelationship, .property(let entity, let property)):
      return "\(entity).\(property) is an attribute, not a relationship"
    case (.wrongType, .value(let object, let property, let problem)): return "\(object).\(property): \(problem)"
    case (.validation, .rule(let object, let property, _, let problem)): return "\(object).\(property): \(problem)"
    case (.invalidIdentity, .detail(let text)): return "no object '\(text)' (an identity is written Entity/N)"
    case (.noSuchObject, .object(let object, _)): return "no object \(object)"
    case (.deletedObject, .object(let object, let sequence)):
      guard let sequence else { return "\(object) was deleted" }
      return "\(object) did not exist as of sequence \(sequence) (created later or deleted by then)"
    case (.modelHashMismatch, .modelHash(let version, let stored, let computed)):
      return
        "\(path): model version \(version) does not match its content hash (written \(stored), now \(computed)): its document was changed after it was stored"
    case (.invalidSortKey, .sortKey(let entity, let key, let problem)):
      return "cannot sort \(entity) by '\(key)': \(problem)"
    case (.notUnique, .uniqueness(let object, let entity, let attributes, let value, let holder)):
      let names = "[\(attributes.joined(separator: ", "))]"
      return "\(object): uniqueness constraint \(names) of \(entity): \(value) is already held by \(holder)"
    case (.wrongDestination, .destination(let object, let relationship, let target, let expected)):
      return "\(object).\(relationship): \(target) is not a \(expected)"
    case (.invalidPosition, .position(let object, let relationship, let position, let count)):
      return "\(object).\(relationship): position \(position) is outside 0...\(count)"
    case (.corrupt, .detail(let detail)): return "store is corrupt: \(detail)"
    case (.transactionEnded, _): return "the transaction was used after its write closure returned"
    case (.readOnly, _): return "\(path) is open read-only"
    case (.unknownModelVersion, .version(let version, _)): return "the store has no model version \(version)"
    case (.alreadyOpen, _): return "\(path) is already open in this process: share the one EventStore object"
    case (.versionChanged, .versionChanged(let opened, let active)):
      return
        "\(path) was opened at model version \(opened) but is now at version \(active): move to it with atActiveVersion() (or open the store again) and build the commit against its model"
    case (.sequenceBeyondLog, .sequence(let sequence, let last)):
      return "sequence \(sequence) is beyond the end of the log (last is \(last))"
    case (.commitBeyondLog, .commit(let commit, let last)):
      return "commit \(commit) is beyond the end of the log (last is commit \(last))"
    case (.sequenceInsideCommit, .insideCommit(let sequence, let commit, let first, let last)):
      return
        "event \(sequence) is inside commit \(commit) (events \(first)...\(last)): no state there was ever committed"
    case (.modelMismatch, .models(let here, let there)):
      return "the stores have different models: \(here) here, \(there) in the target"
    case (.referenceWouldMove, .inverse(let object, let relationship, let target, let inverse)):
      return
        "\(object).\(relationship): referencing \(target) from the copy would take it from the original (its inverse '\(inverse)' is to-one); copy it deep or skip it"
    case (.referenceOutsideStore, .link(let object, let relationship, let target)):
      return
        "\(object).\(relationship): \(target) is not copied and cannot be referenced from another store; copy it deep or skip it"
    case (.referenceToDeleted, .link(let object, let relationship, let target)):
      return
        "\(object).\(relationship): \(target) has been deleted since and cannot be referenced from the copy; copy it deep or skip it"
    case (.projectionDamaged, .detail(let detail)), (.damaged, .detail(let detail)): return detail
    case (.olderFormat, .format(let found, _)):
      return
        "\(path) is in store format \(found), whose projections this version lays out otherwise (\(found < 2 ? "without checksums" : "ordered lists by position"))"
    case (.versionExists, .version(let version, _)): return "the store holds model version \(version) already"
    case (.keyRequired, .detail(let detail)): return "\(path): \(detail)"
    case (.wrongKey, .key(let file, let problem)):
      return "\(path): the key-encryption key \(file) cannot be used: \(problem)"
    case (.erasedSubject, .subject(let object, let subject, _)):
      return "\(object): its subject \(subject.map { "\($0)" } ?? "?") was erased; it holds no personal value any more"
    case (.notASubject, .subject(let object, _, let problem)):
      return "\(object) is not the subject of its personal data: \(problem ?? "")"
    case (.noSubject, .value(let object, let property, let problem)):
      return "\(object).\(property) is personal and has no subject: \(problem)"
    case (.personalDataAcrossStores, .value(let object, let property, _)):
      return
        "\(object).\(property) is personal: it is sealed under this store's keys, which \(path) does not have; copy the subgraph within this store, or leave its personal attributes out of the copy"
    case (.replica, .stream(let stream, _)):
      return "\(path) is a read replica of stream '\(stream)': writes go to the primary"
    case (.fenced, .stream(let stream, let problem)):
      return
        "\(path) was the primary of stream '\(stream)' until another store took over (\(problem ?? "")): it takes no more writes; make a new replica from the stream"
    case (.versionInUse, .version(let version, let problem)):
      return "model version \(version) cannot be dropped: \(problem ?? "")"
    case (.storage, .detail(let detail)): return "\(path): \(detail)"
    case (.invalidCheckpointName, .checkpointName(let name, let maxLength)):
      return "checkpoint name '\(name)': a checkpoint's name must have 1 to \(maxLength) bytes of UTF-8"
    case (.historyTruncated, .truncated(let sequence, let base, let time)):
      return
        "history before sequence \(base) was truncated on \(ISO8601.format(time)): sequence \(sequence) lies before it"
    case (.invalidTruncation, .truncation(let cut, let problem)):
      return "cannot truncate \(path)" + (cut.map { " before sequence \($0)" } ?? "") + ": \(problem)"
    default: return "store error \(code)"
    }
  }

  /// The object at fault, whatever the code: the one refused, not found, or whose
  /// relationship or personal value is at fault; `nil` when the refusal is not about one.
  public var object: ObjectName? {
    switch context {
    case .object(let o, _), .value(let o, _, _), .rule(let o, _, _, _), .uniqueness(let o, _, _, _, _),
      .link(let o, _, _), .destination(let o, _, _, _), .position(let o, _, _, _), .inverse(let o, _, _, _),
      .subject(let o, _, _):
      return o
    default: return nil
    }
  }

  /// The attribute or relationship at fault, as the model names it, whatever the code; the
  /// attributes of a uniqueness constraint are joined by commas (`club, number`).
  public var property: String? {
    switch context {
    case .property(_, let p), .unknownProperty(_, let p, _), .value(_, let p, _), .rule(_, let p, _, _),
      .link(_, let p, _),
      .destination(_, let p, _, _), .position(_, let p, _, _), .inverse(_, let p, _, _):
      return p
    case .uniqueness(_, _, let attributes, _, _): return attributes.joined(separator: ", ")
    default: return nil
    }
  }
}

// MARK: - Where: the context of each code

extension StoreError {
  /// Where a refusal lies and what it found, one shape for each code; its cases name the
  /// codes that use them.
  ///
  /// New codes may bring new cases: a `switch` over it keeps a `default`.
  public enum Context: Sendable, Hashable {
    /// Nothing beyond the code and the path: ``ErrorCode/alreadyExists``,
    /// ``ErrorCode/readOnly``, ``ErrorCode/alreadyOpen``, ``ErrorCode/transactionEnded``.
    case none
    /// What is wrong, in words: ``ErrorCode/notAStore``, ``ErrorCode/corrupt``,
    /// ``ErrorCode/damaged``, ``ErrorCode/projectionDamaged``, `keyRequired`;
    /// for ``ErrorCode/invalidIdentity``, the text that is not an identity.
    case detail(String)
    /// An entity of the model, by name: `unknownEntity`,
    /// ``ErrorCode/abstractEntity``.
    case entity(String)
    /// A property of an entity, by name: ``ErrorCode/notAnAttribute``,
    /// ``ErrorCode/notARelationship``.
    case property(entity: String, property: String)
    /// A name the entity has no property of, and the entity's nearest name when one is
    /// near enough to be a misspelling: ``ErrorCode/unknownProperty``.
    case unknownProperty(entity: String, property: String, nearest: String?)
    /// A sort key as written and why it cannot sort: ``ErrorCode/invalidSortKey``.
    case sortKey(entity: String, key: String, problem: String)
    /// An object not found, or not alive as of a sequence: ``ErrorCode/noSuchObject``,
    /// ``ErrorCode/deletedObject``.
    case object(ObjectName, asOf: UInt64?)
    /// A value refused for an object's attribute: `wrongType`,
    /// ``ErrorCode/noSubject``, ``ErrorCode/personalDataAcrossStores``.
    case value(ObjectName, property: String, problem: String)
    /// A rule of the model a commit broke on an object's property:
    /// ``ErrorCode/validation``. A denied delete, a value out of range, a failed regular
    /// expression and a missing required value each have their own `rule`.
    case rule(ObjectName, property: String, rule: ValidationRule, problem: String)
    /// Values of a uniqueness constraint that another object holds: ``ErrorCode/notUnique``;
    /// `value` is the tuple as messages show values.
    case uniqueness(ObjectName, entity: String, attributes: [String], value: String, holder: ObjectName)
    /// A relationship a clone cannot carry to `target`: ``ErrorCode/referenceOutsideStore``,
    /// ``ErrorCode/referenceToDeleted``.
    case link(ObjectName, relationship: String, target: ObjectName)
    /// A target of another entity than the relationship's: ``ErrorCode/wrongDestination``.
    case destination(ObjectName, relationship: String, target: ObjectName, expected: String)
    /// A position outside an ordered relationship of `count` targets:
    /// ``ErrorCode/invalidPosition``.
    case position(ObjectName, relationship: String, position: Int, count: Int)
    /// A reference a clone would take from the original through a to-one `inverse`:
    /// ``ErrorCode/referenceWouldMove``.
    case inverse(ObjectName, relationship: String, target: ObjectName, inverse: String)
    /// An object and the subject of its personal data: ``ErrorCode/erasedSubject``, and
    /// ``ErrorCode/notASubject`` (naming the subject to erase instead when there is one).
    case subject(ObjectName, subject: ObjectName?, problem: String?)
    /// A store format found, and the newest this version reads: ``ErrorCode/newerFormat``,
    /// ``ErrorCode/olderFormat``.
    case format(found: Int, supported: Int?)
    /// A model version: ``ErrorCode/unknownModelVersion``, ``ErrorCode/versionExists``,
    /// ``ErrorCode/versionInUse`` (saying why).
    case version(Int, problem: String?)
    /// The version a handle was opened at and the one now active:
    /// ``ErrorCode/versionChanged``.
    case versionChanged(opened: Int, active: Int)
    /// A stored model's version, the hash written with it and its document's hash now:
    /// ``ErrorCode/modelHashMismatch``.
    case modelHash(version: Int, stored: String, computed: String)
    /// The two stores' models, described: ``ErrorCode/modelMismatch``.
    case models(here: String, there: String)
    /// The key-encryption key's file and why it cannot be used: ``ErrorCode/wrongKey``.
    case key(file: String, problem: String)
    /// A replication stream: ``ErrorCode/replica``, ``ErrorCode/fenced`` (saying by whom).
    case stream(String, problem: String?)
    /// A checkpoint name refused, and the longest one allowed in bytes:
    /// ``ErrorCode/invalidCheckpointName``.
    case checkpointName(String, maxLength: Int)
    /// A sequence asked for and the log's last: ``ErrorCode/sequenceBeyondLog``.
    case sequence(UInt64, last: UInt64)
    /// A commit asked for and the log's last: ``ErrorCode/commitBeyondLog``.
    case commit(UInt64, last: UInt64)
    /// A sequence inside a commit of events `first...last`: ``ErrorCode/sequenceInsideCommit``.
    case insideCommit(sequence: UInt64, commit: UInt64, first: UInt64, last: UInt64)
    /// A read as of `sequence` (or a position there) in a log whose history before `base`
    /// was truncated at `time`: ``ErrorCode/historyTruncated``. States from `base` on are
    /// kept.
    case truncated(sequence: UInt64, base: UInt64, time: Date)
    /// A truncation refused: the first sequence it would keep, when one was worked out, and
    /// why: ``ErrorCode/invalidTruncation``.
    case truncation(cut: UInt64?, problem: String)
  }

  /// How an error names an object: by entity and identity, or, for an object that the
  /// refused commit inserted, by where it came from — its identity was never committed and
  /// will be given to another object.
  public struct ObjectName: Sendable, Hashable, CustomStringConvertible {
    /// The object's entity, `nil` when its identity is unknown to the store.
    public let entity: String?
    /// The object's identity; for a ``Origin`` other than `nil`, one never committed.
    public let id: ObjectID
    /// Where an object the refused commit inserted came from; `nil` for a stored object.
    public internal(set) var origin: Origin?

    /// Where an object that a refused commit inserted came from.
    public enum Origin: Sendable, Hashable {
      /// The `n`th object the commit inserted, from 1.
      case inserted(Int)
      /// The placeholder of an appended file (`$c1`) that named it, inserted on `line`.
      case placeholder(String, line: Int)
      /// The object of an imported file on `line`.
      case line(Int)
      /// The copy a refused clone made of the object `original` (of the same entity).
      case copy(of: ObjectID)
    }

    init(entity: String?, id: ObjectID, origin: Origin? = nil) {
      self.entity = entity
      self.id = id
      self.origin = origin
    }

    /// `Entity/N` (`#N` when the entity is unknown) for a stored object; for one the
    /// refused commit inserted, where it came from (`new Customer 2 of the commit`,
    /// `Customer $c1 (line 3)`, `the Customer of line 3`, `the copy of Customer/8`).
    public var description: String {
      let entity = entity ?? "object"
      switch origin {
      case nil: return self.entity.map { "\($0)/\(id.rawValue)" } ?? "#\(id.rawValue)"
      case .inserted(let n): return "new \(entity) \(n) of the commit"
      case .placeholder(let p, let line): return "\(entity) \(p) (line \(line))"
      case .line(let line): return "the \(entity) of line \(line)"
      case .copy(let original): return "the copy of \(entity)/\(original.rawValue)"
      }
    }
  }

  /// The error with every object it names passed through `rename` (a refused commit's own
  /// objects named by where they came from).
  func renamingObjects(_ rename: (ObjectName) -> ObjectName) -> StoreError {
    let c: Context
    switch context {
    case .object(let o, let asOf): c = .object(rename(o), asOf: asOf)
    case .value(let o, let p, let problem): c = .value(rename(o), property: p, problem: problem)
    case .rule(let o, let p, let rule, let problem): c = .rule(rename(o), property: p, rule: rule, problem: problem)
    case .uniqueness(let o, let e, let a, let v, let h):
      c = .uniqueness(rename(o), entity: e, attributes: a, value: v, holder: rename(h))
    case .link(let o, let r, let t): c = .link(rename(o), relationship: r, target: rename(t))
    case .destination(let o, let r, let t, let x):
      c = .destination(rename(o), relationship: r, target: rename(t), expected: x)
    case .position(let o, let r, let p, let n): c = .position(rename(o), relationship: r, position: p, count: n)
    case .inverse(let o, let r, let t, let i): c = .inverse(rename(o), relationship: r, target: rename(t), inverse: i)
    case .subject(let o, let s, let problem): c = .subject(rename(o), subject: s.map(rename), problem: problem)
    default: return self
    }
    return StoreError(code, path: path, c)
  }
}

// MARK: - The kinds of refusal

extension StoreError {
  static func notAStore(path: String, detail: String) -> Self { .init(.notAStore, path: path, .detail(detail)) }

  static func alreadyExists(path: String) -> Self { .init(.alreadyExists, path: path) }

  static func newerFormat(path: String, found: Int, supported: Int) -> Self {
    .init(.newerFormat, path: path, .format(found: found, supported: supported))
  }

  static func unknownEntity(_ entity: String) -> Self { .init(.unknownEntity, .entity(entity)) }

  static func abstractEntity(_ entity: String) -> Self { .init(.abstractEntity, .entity(entity)) }

  static func unknownProperty(entity: String, property: String, nearest: String? = nil) -> Self {
    .init(.unknownProperty, .unknownProperty(entity: entity, property: property, nearest: nearest))
  }

  /// A name `e` has no property of, with the nearest name it has, if one is near.
  static func unknownProperty(_ e: Entity, property: String) -> Self {
    unknownProperty(
      entity: e.name, property: property, nearest: Spelling.nearest(to: property, among: e.properties.map(\.name)))
  }

  static func notAnAttribute(entity: String, property: String) -> Self {
    .init(.notAnAttribute, .property(entity: entity, property: property))
  }

  static func notARelationship(entity: String, property: String) -> Self {
    .init(.notARelationship, .property(entity: entity, property: property))
  }

  static func wrongType(object: ObjectName, attribute: String, detail: String) -> Self {
    .init(.wrongType, .value(object, property: attribute, problem: detail))
  }

  static func noSuchObject(_ object: ObjectName) -> Self { .init(.noSuchObject, .object(object, asOf: nil)) }

  /// `text` was given as an identity and is not one (`Entity/N`).
  static func invalidIdentity(_ text: String) -> Self { .init(.invalidIdentity, .detail(text)) }

  static func wrongDestination(object: ObjectName, relationship: String, target: ObjectName, expected: String)
    -> Self
  {
    .init(.wrongDestination, .destination(object, relationship: relationship, target: target, expected: expected))
  }

  static func invalidPosition(object: ObjectName, relationship: String, position: Int, count: Int) -> Self {
    .init(.invalidPosition, .position(object, relationship: relationship, position: position, count: count))
  }

  /// `stored` is the hash written with the model, `computed` the document's hash now.
  static func modelHashMismatch(path: String, version: Int, stored: String, computed: String) -> Self {
    .init(.modelHashMismatch, path: path, .modelHash(version: version, stored: stored, computed: computed))
  }

  /// `key` as written, `detail` what is wrong with it.
  static func invalidSortKey(entity: String, key: String, detail: String) -> Self {
    .init(.invalidSortKey, .sortKey(entity: entity, key: key, problem: detail))
  }

  /// `value` as messages show values; `holder` is the object that has them.
  static func notUnique(object: ObjectName, entity: String, attributes: [String], value: String, holder: ObjectName)
    -> Self
  {
    .init(.notUnique, .uniqueness(object, entity: entity, attributes: attributes, value: value, holder: holder))
  }

  /// `rule` is the rule broken, `message` says how.
  static func validation(object: ObjectName, property: String, rule: ValidationRule, message: String) -> Self {
    .init(.validation, .rule(object, property: property, rule: rule, problem: message))
  }

  static func corrupt(_ detail: String) -> Self { .init(.corrupt, .detail(detail)) }

  static let transactionEnded = Self(.transactionEnded)

  static func readOnly(path: String) -> Self { .init(.readOnly, path: path) }

  static func unknownModelVersion(_ version: Int) -> Self {
    .init(.unknownModelVersion, .version(version, problem: nil))
  }

  static func alreadyOpen(path: String) -> Self { .init(.alreadyOpen, path: path) }

  static func damaged(path: String, detail: String) -> Self { .init(.damaged, path: path, .detail(detail)) }

  static func projectionDamaged(path: String, detail: String) -> Self {
    .init(.projectionDamaged, path: path, .detail(detail))
  }

  static func olderFormat(path: String, found: Int) -> Self {
    .init(.olderFormat, path: path, .format(found: found, supported: nil))
  }

  static func keyRequired(path: String, detail: String) -> Self { .init(.keyRequired, path: path, .detail(detail)) }

  static func wrongKey(path: String, keyFile: String, detail: String) -> Self {
    .init(.wrongKey, path: path, .key(file: keyFile, problem: detail))
  }

  static func erasedSubject(object: ObjectName, subject: ObjectName) -> Self {
    .init(.erasedSubject, .subject(object, subject: subject, problem: nil))
  }

  /// `subject` is the subject to erase instead, when the object has one.
  static func notASubject(object: ObjectName, subject: ObjectName?, detail: String) -> Self {
    .init(.notASubject, .subject(object, subject: subject, problem: detail))
  }

  static func noSubject(object: ObjectName, attribute: String, detail: String) -> Self {
    .init(.noSubject, .value(object, property: attribute, problem: detail))
  }

  static func personalDataAcrossStores(object: ObjectName, attribute: String, target: String) -> Self {
    .init(
      .personalDataAcrossStores, path: target,
      .value(object, property: attribute, problem: "sealed under another store's keys"))
  }

  static func versionExists(_ version: Int) -> Self { .init(.versionExists, .version(version, problem: nil)) }

  static func replica(path: String, stream: String) -> Self {
    .init(.replica, path: path, .stream(stream, problem: nil))
  }

  static func fenced(path: String, stream: String, detail: String) -> Self {
    .init(.fenced, path: path, .stream(stream, problem: detail))
  }

  static func versionInUse(_ version: Int, reason: String) -> Self {
    .init(.versionInUse, .version(version, problem: reason))
  }

  static func invalidCheckpointName(_ name: String, maxLength: Int) -> Self {
    .init(.invalidCheckpointName, .checkpointName(name, maxLength: maxLength))
  }

  static func versionChanged(path: String, opened: Int, active: Int) -> Self {
    .init(.versionChanged, path: path, .versionChanged(opened: opened, active: active))
  }

  static func sequenceBeyondLog(_ sequence: UInt64, last: UInt64) -> Self {
    .init(.sequenceBeyondLog, .sequence(sequence, last: last))
  }

  /// `last` is the log's last commit.
  static func commitBeyondLog(_ commit: UInt64, last: UInt64) -> Self {
    .init(.commitBeyondLog, .commit(commit, last: last))
  }

  /// Event `sequence` lies in commit `commit`, which holds events `first...last`.
  static func sequenceInsideCommit(_ sequence: UInt64, commit: UInt64, first: UInt64, last: UInt64) -> Self {
    .init(.sequenceInsideCommit, .insideCommit(sequence: sequence, commit: commit, first: first, last: last))
  }

  /// A read as of `sequence`, before `base`, the last sequence a truncated log's base holds.
  static func historyTruncated(_ sequence: UInt64, base: HistoryBase) -> Self {
    .init(.historyTruncated, .truncated(sequence: sequence, base: base.lastSequence, time: base.truncatedAt))
  }

  static func invalidTruncation(path: String, cut: UInt64?, _ problem: String) -> Self {
    .init(.invalidTruncation, path: path, .truncation(cut: cut, problem: problem))
  }

  static func deletedObject(_ object: ObjectName, asOf sequence: UInt64?) -> Self {
    .init(.deletedObject, .object(object, asOf: sequence))
  }

  static func modelMismatch(source: String, target: String) -> Self {
    .init(.modelMismatch, .models(here: source, there: target))
  }

  static func referenceWouldMove(object: ObjectName, relationship: String, target: ObjectName, inverse: String)
    -> Self
  {
    .init(.referenceWouldMove, .inverse(object, relationship: relationship, target: target, inverse: inverse))
  }

  static func referenceOutsideStore(object: ObjectName, relationship: String, target: ObjectName) -> Self {
    .init(.referenceOutsideStore, .link(object, relationship: relationship, target: target))
  }

  static func referenceToDeleted(object: ObjectName, relationship: String, target: ObjectName) -> Self {
    .init(.referenceToDeleted, .link(object, relationship: relationship, target: target))
  }

  init(_ e: CorruptionError) { self = .corrupt(e.description) }
}

extension StoreError {
  /// The error a store reports for LMDB's `e`: a projection entry that fails its checksum
  /// becomes ``ErrorCode/projectionDamaged``, saying that a rebuild recovers it; other damage
  /// found in the file ``ErrorCode/damaged``; any other failure ``ErrorCode/storage``, with
  /// LMDB's error as the ``underlying`` one.
  static func reporting(_ e: LMDBError, path: String) -> StoreError {
    guard let damage = e.damage else { return StoreError(storage: e, path: path) }
    guard let db = damage.database, !db.hasPrefix("log."), db != "meta", db != "models" else {
      return .damaged(path: path, detail: damage.description)
    }
    return .projectionDamaged(path: path, detail: damage.description)
  }

  /// Runs `body`, reporting an error of LMDB's as the store's (``reporting(_:path:)``): what
  /// a public operation runs that reaches LMDB outside a read or a commit.
  static func reportingStorage<R>(path: String, _ body: () throws -> R) throws -> R {
    do {
      return try body()
    } catch let e as LMDBError {
      throw reporting(e, path: path)
    }
  }
}

// MARK: - The codes

extension ErrorCode where Domain == StoreError {
  /// The directory is not an EventGraph store.
  public static var notAStore: Self { Self("notAStore") }
  /// The store exists already (when creating).
  public static var alreadyExists: Self { Self("alreadyExists") }
  /// The store was written by a newer version of EventGraph.
  public static var newerFormat: Self { Self("newerFormat") }
  /// The model has no entity of this name.
  public static var unknownEntity: Self { Self("unknownEntity") }
  /// An abstract entity cannot be inserted.
  public static var abstractEntity: Self { Self("abstractEntity") }
  /// The entity has no property of this name.
  public static var unknownProperty: Self { Self("unknownProperty") }
  /// A relationship was used as an attribute.
  public static var notAnAttribute: Self { Self("notAnAttribute") }
  /// An attribute was used as a relationship.
  public static var notARelationship: Self { Self("notARelationship") }
  /// A value of the wrong type for an attribute.
  public static var wrongType: Self { Self("wrongType") }
  /// No object has this identity (it never existed, or it was deleted).
  public static var noSuchObject: Self { Self("noSuchObject") }
  /// Text given as an object's identity is not one (an identity is written `Entity/N`).
  public static var invalidIdentity: Self { Self("invalidIdentity") }
  /// The object is not of the entity the relationship leads to.
  public static var wrongDestination: Self { Self("wrongDestination") }
  /// A position outside an ordered relationship.
  public static var invalidPosition: Self { Self("invalidPosition") }
  /// A commit broke a rule of the model: required value, counts, a deny delete rule.
  public static var validation: Self { Self("validation") }
  /// A stored model's document does not hash to the content hash written with it.
  public static var modelHashMismatch: Self { Self("modelHashMismatch") }
  /// A sort key through a to-many relationship, which gives no one value to sort by.
  public static var invalidSortKey: Self { Self("invalidSortKey") }
  /// A commit gave an object values of a uniqueness constraint that another object holds.
  public static var notUnique: Self { Self("notUnique") }
  /// A stored event or record does not fit the model or the projection.
  public static var corrupt: Self { Self("corrupt") }
  /// The transaction was used after its closure returned.
  public static var transactionEnded: Self { Self("transactionEnded") }
  /// The store is open read-only.
  public static var readOnly: Self { Self("readOnly") }
  /// The model version asked for is not in the store.
  public static var unknownModelVersion: Self { Self("unknownModelVersion") }
  /// The store is already open in this process (LMDB allows one handle per process).
  public static var alreadyOpen: Self { Self("alreadyOpen") }
  /// The store's active model version changed (an upcast or rollback) since it was opened.
  public static var versionChanged: Self { Self("versionChanged") }
  /// A sequence past the end of the log.
  public static var sequenceBeyondLog: Self { Self("sequenceBeyondLog") }
  /// A commit number past the end of the log.
  public static var commitBeyondLog: Self { Self("commitBeyondLog") }
  /// A sequence inside a commit, where the state was never committed (time travel goes
  /// from commit to commit).
  public static var sequenceInsideCommit: Self { Self("sequenceInsideCommit") }
  /// The object was deleted (or, with a sequence, did not exist as of that sequence).
  public static var deletedObject: Self { Self("deletedObject") }
  /// Two stores that must share a model do not (a clone across stores).
  public static var modelMismatch: Self { Self("modelMismatch") }
  /// A clone's `reference` would move the target away from the original.
  public static var referenceWouldMove: Self { Self("referenceWouldMove") }
  /// A clone into another store cannot reference an object that is not copied with it.
  public static var referenceOutsideStore: Self { Self("referenceOutsideStore") }
  /// A clone of the past cannot reference an object deleted since.
  public static var referenceToDeleted: Self { Self("referenceToDeleted") }
  /// The store holds the model version already (when installing one).
  public static var versionExists: Self { Self("versionExists") }
  /// The model version is in use and cannot be dropped (active, or this handle's).
  public static var versionInUse: Self { Self("versionInUse") }
  /// A checkpoint's name is empty or too long.
  public static var invalidCheckpointName: Self { Self("invalidCheckpointName") }
  /// The store's file is damaged: its context says where.
  public static var damaged: Self { Self("damaged") }
  /// An entry of a projection fails its checksum: its context says which; a rebuild makes the
  /// projections anew from the log.
  public static var projectionDamaged: Self { Self("projectionDamaged") }
  /// The store was written in an older format that this version upgrades when it opens
  /// the store for writing.
  public static var olderFormat: Self { Self("olderFormat") }
  /// The store is a read replica of a replication stream: writes go to the primary.
  public static var replica: Self { Self("replica") }
  /// The store was the primary of a replication stream until another store took over.
  public static var fenced: Self { Self("fenced") }
  /// The storage engine failed.
  ///
  /// An I/O error or a full disk, a key too long for LMDB, too many readers: the context has
  /// LMDB's message and ``StoreError/underlying`` LMDB's error.
  public static var storage: Self { Self("storage") }
  /// The operation needs the store's key-encryption key (its model has personal
  /// attributes) and the store was opened without one (Docs/privacy.md).
  public static var keyRequired: Self { Self("keyRequired") }
  /// The key-encryption key given does not open the store's keys: its context names the key
  /// file.
  public static var wrongKey: Self { Self("wrongKey") }
  /// A personal value given to an object whose subject was erased.
  public static var erasedSubject: Self { Self("erasedSubject") }
  /// An erasure of an object that is not the subject of its personal data; its context names
  /// the subject to erase instead, when there is one.
  public static var notASubject: Self { Self("notASubject") }
  /// A personal value whose subject cannot be found: the key path of its entity's
  /// `subject` leads nowhere at the end of the commit.
  public static var noSubject: Self { Self("noSubject") }
  /// A copy into another store of objects that hold personal values: they are sealed
  /// under this store's keys, which the other store does not have.
  public static var personalDataAcrossStores: Self { Self("personalDataAcrossStores") }
  /// A read of a state, or a position, before the base of a truncated log: the history
  /// before it is gone (Docs/retention.md).
  public static var historyTruncated: Self { Self("historyTruncated") }
  /// A truncation's cut that cannot be made: at 0, past the log's end, inside a commit, at
  /// or before an earlier base; or a store in a state where none can (an upcast builds
  /// from its log, it is a replica).
  public static var invalidTruncation: Self { Self("invalidTruncation") }
}

extension ErrorCode where Domain == StoreError {
  /// Every code of the domain, in the order they are declared: the suite meets each with
  /// the operation that makes it.
  static let all: [Self] = [
    .notAStore,
    .alreadyExists,
    .newerFormat,
    .unknownEntity,
    .abstractEntity,
    .unknownProperty,
    .notAnAttribute,
    .notARelationship,
    .wrongType,
    .noSuchObject,
    .invalidIdentity,
    .wrongDestination,
    .invalidPosition,
    .validation,
    .modelHashMismatch,
    .invalidSortKey,
    .notUnique,
    .corrupt,
    .transactionEnded,
    .readOnly,
    .unknownModelVersion,
    .alreadyOpen,
    .versionChanged,
    .sequenceBeyondLog,
    .commitBeyondLog,
    .sequenceInsideCommit,
    .deletedObject,
    .modelMismatch,
    .referenceWouldMove,
    .referenceOutsideStore,
    .referenceToDeleted,
    .versionExists,
    .versionInUse,
    .invalidCheckpointName,
    .damaged,
    .projectionDamaged,
    .olderFormat,
    .replica,
    .fenced,
    .storage,
    .keyRequired,
    .wrongKey,
    .erasedSubject,
    .notASubject,
    .noSubject,
    .personalDataAcrossStores,
    .historyTruncated,
    .invalidTruncation,
  ]
}

extension EventStore {
  /// A read transaction of the store's environment, with LMDB's errors reported as the
  /// store's (``StoreError/reporting(_:path:)``).
  func readStorage<R>(_ body: (borrowing ReadTransaction) throws -> R) throws -> R {
    try StoreError.reportingStorage(path: path) { try env.read(body) }
  }

  /// ``readStorage(_:)`` through a shareable handle.
  func readStorageHandle<R>(_ body: (ReadHandle) throws -> R) throws -> R {
    try StoreError.reportingStorage(path: path) { try env.readHandle(body) }
  }

  /// A write transaction of the store's environment outside the commit path (a position, a
  /// switch request), with LMDB's errors reported as the store's.
  func writeStorage<R>(_ body: (borrowing WriteTransaction) throws -> R) throws -> R {
    try StoreError.reportingStorage(path: path) { try env.write(body) }
  }
}
