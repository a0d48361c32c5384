import LMDB

/// Why the store refused an operation: what was wrong and where.
///
/// A struct rather than an enum, so that new kinds of refusal can be added without
/// breaking callers (GRDB's `DatabaseError` and `ResultCode` do the same). Match on the
/// ``code`` and read the fields that say where:
///
/// ```swift
/// do {
///   try store.write { tx in try tx.set(book, "name", .string("")) }
/// } catch let e as StoreError where e.code == .validation {
///   print("\(e.object ?? "?").\(e.property ?? "?") refused: \(e.detail ?? "")")
/// }
/// ```
///
/// Errors compare equal when their code and all their fields are equal.
public struct StoreError: RemediedError, Sendable, Hashable {
  /// What kind of refusal an error is; compare with the constants (`e.code == .readOnly`).
  public typealias Code = ErrorCode<StoreError>

  /// What kind of refusal this is.
  public let code: Code
  /// The store directory.
  public let path: String?
  /// The entity at fault; for ``ErrorCode/wrongDestination``, the entity expected.
  public let entity: String?
  /// The object at fault, as `Entity/12`.
  public let object: String?
  /// The attribute or relationship at fault.
  public let property: String?
  /// The object a relationship leads to; for ``ErrorCode/modelMismatch``, the target's model;
  /// for ``ErrorCode/replica`` and ``ErrorCode/fenced``, the replication stream.
  public let target: String?
  /// The inverse relationship (``ErrorCode/referenceWouldMove``).
  public let inverse: String?
  /// This store's model (``ErrorCode/modelMismatch``).
  public let source: String?
  /// What is wrong, in words.
  public let detail: String?
  /// The version found: the store format (``ErrorCode/newerFormat``), the model version asked
  /// for (``ErrorCode/unknownModelVersion``) or now active (``ErrorCode/versionChanged``).
  public let version: Int?
  /// The version expected: the newest store format read (``ErrorCode/newerFormat``) or the
  /// model version the store was opened at (``ErrorCode/versionChanged``).
  public let expectedVersion: Int?
  /// The position asked for (``ErrorCode/invalidPosition``).
  public let position: Int?
  /// The number of targets there are (``ErrorCode/invalidPosition``).
  public let count: Int?
  /// The sequence asked for (``ErrorCode/sequenceBeyondLog``, ``ErrorCode/deletedObject``).
  public let sequence: UInt64?
  /// The last sequence of the log (``ErrorCode/sequenceBeyondLog``), or of the commit that holds
  /// ``sequence`` (``ErrorCode/sequenceInsideCommit``).
  public let lastSequence: UInt64?
  /// The commit asked for (``ErrorCode/commitBeyondLog``) or holding ``sequence``
  /// (``ErrorCode/sequenceInsideCommit``).
  public let commit: UInt64?
  /// The first sequence of ``commit`` (``ErrorCode/sequenceInsideCommit``).
  public let firstSequence: UInt64?
  /// LMDB's error (``ErrorCode/lmdb``).
  public let lmdb: LMDBError?
  /// The rule of the model a commit broke, for ``ErrorCode/validation``.
  ///
  /// A denied delete, a value out of range, a failed regular expression and a missing
  /// required value each have their own: a service tells them apart without the message.
  public let rule: ValidationRule?

  private init(
    _ code: Code, path: String? = nil, entity: String? = nil, object: String? = nil, property: String? = nil,
    target: String? = nil, inverse: String? = nil, source: String? = nil, detail: String? = nil,
    version: Int? = nil, expectedVersion: Int? = nil, position: Int? = nil, count: Int? = nil,
    sequence: UInt64? = nil, lastSequence: UInt64? = nil, commit: UInt64? = nil, firstSequence: UInt64? = nil,
    lmdb: LMDBError? = nil, rule: ValidationRule? = nil
  ) {
    self.rule = rule
    self.commit = commit
    self.firstSequence = firstSequence
    self.code = code
    self.path = path
    self.entity = entity
    self.object = object
    self.property = property
    self.target = target
    self.inverse = inverse
    self.source = source
    self.detail = detail
    self.version = version
    self.expectedVersion = expectedVersion
    self.position = position
    self.count = count
    self.sequence = sequence
    self.lastSequence = lastSequence
    self.lmdb = lmdb
  }

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
    let (path, entity, object, property) = (path ?? "", entity ?? "", object ?? "", property ?? "")
    let (target, detail, version, expected) = (target ?? "", detail ?? "", version ?? 0, expectedVersion ?? 0)
    switch code {
    case .notAStore: return "\(path) is not an EventGraph store: \(detail)"
    case .alreadyExists: return "\(path) already holds a store"
    case .newerFormat:
      return "\(path) was written by a newer EventGraph (store format \(version); this version reads up to \(expected))"
    case .unknownEntity: return "unknown entity '\(entity)'"
    case .abstractEntity: return "entity '\(entity)' is abstract and cannot be inserted"
    case .unknownProperty: return "entity '\(entity)' has no property '\(property)'"
    case .notAnAttribute: return "\(entity).\(property) is a relationship, not an attribute"
    case .notARelationship: return "\(entity).\(property) is an attribute, not a relationship"
    case .wrongType, .validation: return "\(object).\(property): \(detail)"
    case .noSuchObject: return "no object \(object)"
    case .modelHashMismatch:
      return
        "\(path): model version \(version) does not match its content hash (written \(target), now \(detail)): its document was changed after it was stored"
    case .invalidSortKey: return "cannot sort \(entity) by '\(property)': \(detail)"
    case .notUnique:
      return
        "\(object): uniqueness constraint \(property) of \(entity): \(detail) is already held by \(target)"
    case .wrongDestination: return "\(object).\(property): \(target) is not a \(entity)"
    case .invalidPosition: return "\(object).\(property): position \(position ?? 0) is outside 0...\(count ?? 0)"
    case .corrupt: return "store is corrupt: \(detail)"
    case .transactionEnded: return "the transaction was used after its write closure returned"
    case .readOnly: return "\(path) is open read-only"
    case .unknownModelVersion: return "the store has no model version \(version)"
    case .alreadyOpen: return "\(path) is already open in this process: share the one EventStore object"
    case .versionChanged:
      return "\(path) was opened at model version \(expected) but is now at version \(version): open it again"
    case .sequenceBeyondLog:
      return "sequence \(sequence ?? 0) is beyond the end of the log (last is \(lastSequence ?? 0))"
    case .commitBeyondLog:
      return "commit \(commit ?? 0) is beyond the end of the log (last is commit \(count ?? 0))"
    case .sequenceInsideCommit:
      let (c, first, last) = (commit ?? 0, firstSequence ?? 0, lastSequence ?? 0)
      return
        "event \(sequence ?? 0) is inside commit \(c) (events \(first)...\(last)): no state there was ever committed"
    case .deletedObject:
      guard let sequence else { return "\(object) was deleted" }
      return "\(object) did not exist as of sequence \(sequence) (created later or deleted by then)"
    case .modelMismatch: return "the stores have different models: \(source ?? "") here, \(target) in the target"
    case .referenceWouldMove:
      return
        "\(object).\(property): referencing \(target) from the copy would take it from the original (its inverse '\(inverse ?? "")' is to-one); copy it deep or skip it"
    case .referenceOutsideStore:
      return
        "\(object).\(property): \(target) is not copied and cannot be referenced from another store; copy it deep or skip it"
    case .referenceToDeleted:
      return
        "\(object).\(property): \(target) has been deleted since and cannot be referenced from the copy; copy it deep or skip it"
    case .lmdb: return lmdb?.description ?? "LMDB failed"
    case .projectionDamaged: return detail
    case .olderFormat:
      return
        "\(path) is in store format \(version), whose projections this version lays out otherwise (\(version < 2 ? "without checksums" : "ordered lists by position"))"
    case .damaged: return detail
    case .versionExists: return "the store holds model version \(version) already"
    case .keyRequired: return "\(path): \(detail)"
    case .wrongKey: return "\(path): the key-encryption key \(target) cannot be used: \(detail)"
    case .erasedSubject: return "\(object): its subject \(target) was erased; it holds no personal value any more"
    case .notASubject: return "\(object) is not the subject of its personal data: \(detail)"
    case .noSubject: return "\(object).\(property) is personal and has no subject: \(detail)"
    case .replica:
      return
        "\(path) is a read replica of stream '\(target)': writes go to the primary"
    case .fenced:
      return
        "\(path) was the primary of stream '\(target)' until another store took over (\(detail)): it takes no more writes; make a new replica from the stream"
    case .versionInUse: return "model version \(version) cannot be dropped: \(detail)"
    case .invalidCheckpointName:
      return "checkpoint name '\(property)': a checkpoint's name must have 1 to \(count ?? 0) bytes of UTF-8"
    default: return "store error \(code)"
    }
  }
}

// MARK: - The kinds of refusal

extension StoreError {
  public static func notAStore(path: String, detail: String) -> Self { .init(.notAStore, path: path, detail: detail) }

  public static func alreadyExists(path: String) -> Self { .init(.alreadyExists, path: path) }

  public static func newerFormat(path: String, found: Int, supported: Int) -> Self {
    .init(.newerFormat, path: path, version: found, expectedVersion: supported)
  }

  public static func unknownEntity(_ entity: String) -> Self { .init(.unknownEntity, entity: entity) }

  public static func abstractEntity(_ entity: String) -> Self { .init(.abstractEntity, entity: entity) }

  public static func unknownProperty(entity: String, property: String) -> Self {
    .init(.unknownProperty, entity: entity, property: property)
  }

  public static func notAnAttribute(entity: String, property: String) -> Self {
    .init(.notAnAttribute, entity: entity, property: property)
  }

  public static func notARelationship(entity: String, property: String) -> Self {
    .init(.notARelationship, entity: entity, property: property)
  }

  public static func wrongType(object: String, attribute: String, detail: String) -> Self {
    .init(.wrongType, object: object, property: attribute, detail: detail)
  }

  public static func noSuchObject(_ object: String) -> Self { .init(.noSuchObject, object: object) }

  public static func wrongDestination(object: String, relationship: String, target: String, expected: String) -> Self {
    .init(.wrongDestination, entity: expected, object: object, property: relationship, target: target)
  }

  public static func invalidPosition(object: String, relationship: String, position: Int, count: Int) -> Self {
    .init(.invalidPosition, object: object, property: relationship, position: position, count: count)
  }

  /// `stored` is the hash written with the model, `computed` the document's hash now.
  public static func modelHashMismatch(path: String, version: Int, stored: String, computed: String) -> Self {
    .init(.modelHashMismatch, path: path, target: stored, detail: computed, version: version)
  }

  /// `key` as written, `detail` what is wrong with it.
  public static func invalidSortKey(entity: String, key: String, detail: String) -> Self {
    .init(.invalidSortKey, entity: entity, property: key, detail: detail)
  }

  /// `attributes` as a model file writes them (`[club, number]`), `value` as messages
  /// show values; `holder` is the object that has them.
  public static func notUnique(object: String, entity: String, attributes: String, value: String, holder: String)
    -> Self
  {
    .init(.notUnique, entity: entity, object: object, property: attributes, target: holder, detail: value)
  }

  /// `rule` is the rule broken, `message` says how.
  public static func validation(object: String, property: String, rule: ValidationRule, message: String) -> Self {
    .init(.validation, object: object, property: property, detail: message, rule: rule)
  }

  public static func corrupt(_ detail: String) -> Self { .init(.corrupt, detail: detail) }

  public static let transactionEnded = Self(.transactionEnded)

  public static func readOnly(path: String) -> Self { .init(.readOnly, path: path) }

  public static func unknownModelVersion(_ version: Int) -> Self { .init(.unknownModelVersion, version: version) }

  public static func alreadyOpen(path: String) -> Self { .init(.alreadyOpen, path: path) }

  public static func damaged(path: String, detail: String) -> Self { .init(.damaged, path: path, detail: detail) }

  public static func projectionDamaged(path: String, detail: String) -> Self {
    .init(.projectionDamaged, path: path, detail: detail)
  }

  public static func olderFormat(path: String, found: Int) -> Self { .init(.olderFormat, path: path, version: found) }

  public static func keyRequired(path: String, detail: String) -> Self {
    .init(.keyRequired, path: path, detail: detail)
  }

  public static func wrongKey(path: String, keyFile: String, detail: String) -> Self {
    .init(.wrongKey, path: path, target: keyFile, detail: detail)
  }

  public static func erasedSubject(object: String, subject: String) -> Self {
    .init(.erasedSubject, object: object, target: subject)
  }

  /// `subject` is the subject to erase instead, when the object has one.
  public static func notASubject(object: String, subject: String?, detail: String) -> Self {
    .init(.notASubject, object: object, target: subject, detail: detail)
  }

  public static func noSubject(object: String, attribute: String, detail: String) -> Self {
    .init(.noSubject, object: object, property: attribute, detail: detail)
  }

  public static func versionExists(_ version: Int) -> Self { .init(.versionExists, version: version) }

  public static func replica(path: String, stream: String) -> Self { .init(.replica, path: path, target: stream) }

  public static func fenced(path: String, stream: String, detail: String) -> Self {
    .init(.fenced, path: path, target: stream, detail: detail)
  }

  public static func versionInUse(_ version: Int, reason: String) -> Self {
    .init(.versionInUse, detail: reason, version: version)
  }

  public static func invalidCheckpointName(_ name: String, maxLength: Int) -> Self {
    .init(.invalidCheckpointName, property: name, count: maxLength)
  }

  public static func versionChanged(path: String, opened: Int, active: Int) -> Self {
    .init(.versionChanged, path: path, version: active, expectedVersion: opened)
  }

  public static func sequenceBeyondLog(_ sequence: UInt64, last: UInt64) -> Self {
    .init(.sequenceBeyondLog, sequence: sequence, lastSequence: last)
  }

  /// `last` is the log's last commit.
  public static func commitBeyondLog(_ commit: UInt64, last: UInt64) -> Self {
    .init(.commitBeyondLog, count: Int(clamping: last), commit: commit)
  }

  /// Event `sequence` lies in commit `commit`, which holds events `first...last`.
  public static func sequenceInsideCommit(_ sequence: UInt64, commit: UInt64, first: UInt64, last: UInt64) -> Self {
    .init(.sequenceInsideCommit, sequence: sequence, lastSequence: last, commit: commit, firstSequence: first)
  }

  public static func deletedObject(_ object: String, asOf sequence: UInt64?) -> Self {
    .init(.deletedObject, object: object, sequence: sequence)
  }

  public static func modelMismatch(source: String, target: String) -> Self {
    .init(.modelMismatch, target: target, source: source)
  }

  public static func referenceWouldMove(object: String, relationship: String, target: String, inverse: String) -> Self {
    .init(.referenceWouldMove, object: object, property: relationship, target: target, inverse: inverse)
  }

  public static func referenceOutsideStore(object: String, relationship: String, target: String) -> Self {
    .init(.referenceOutsideStore, object: object, property: relationship, target: target)
  }

  public static func referenceToDeleted(object: String, relationship: String, target: String) -> Self {
    .init(.referenceToDeleted, object: object, property: relationship, target: target)
  }

  public static func lmdb(_ error: LMDBError) -> Self { .init(.lmdb, lmdb: error) }

  init(_ e: CorruptionError) { self = .corrupt(e.description) }
}

extension StoreError {
  /// The error a store reports for LMDB's `e`: a projection entry that fails its checksum
  /// becomes ``ErrorCode/projectionDamaged``, saying that a rebuild recovers it; anything else
  /// stays as it is.
  static func reporting(_ e: LMDBError, path: String) -> any Error {
    guard let damage = e.damage, let db = damage.database, !db.hasPrefix("log."), db != "meta", db != "models" else {
      return e
    }
    return StoreError.projectionDamaged(path: path, detail: damage.description)
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
  /// LMDB refused; the error's `lmdb` field says how.
  public static var lmdb: Self { Self("lmdb") }
  /// The store holds the model version already (when installing one).
  public static var versionExists: Self { Self("versionExists") }
  /// The model version is in use and cannot be dropped (active, or this handle's).
  public static var versionInUse: Self { Self("versionInUse") }
  /// A checkpoint's name is empty or too long.
  public static var invalidCheckpointName: Self { Self("invalidCheckpointName") }
  /// The store's file is damaged: `detail` says where.
  public static var damaged: Self { Self("damaged") }
  /// An entry of a projection fails its checksum: `detail` says which; a rebuild makes the
  /// projections anew from the log.
  public static var projectionDamaged: Self { Self("projectionDamaged") }
  /// The store was written in an older format that this version upgrades when it opens
  /// the store for writing.
  public static var olderFormat: Self { Self("olderFormat") }
  /// The store is a read replica of a replication stream: writes go to the primary.
  public static var replica: Self { Self("replica") }
  /// The store was the primary of a replication stream until another store took over.
  public static var fenced: Self { Self("fenced") }
  /// The operation needs the store's key-encryption key (its model has personal
  /// attributes) and the store was opened without one (Docs/privacy.md).
  public static var keyRequired: Self { Self("keyRequired") }
  /// The key-encryption key given does not open the store's keys; `target` is the key
  /// file.
  public static var wrongKey: Self { Self("wrongKey") }
  /// A personal value given to an object whose subject was erased.
  public static var erasedSubject: Self { Self("erasedSubject") }
  /// An erasure of an object that is not the subject of its personal data; `target` names
  /// the subject to erase instead, when there is one.
  public static var notASubject: Self { Self("notASubject") }
  /// A personal value whose subject cannot be found: the key path of its entity's
  /// `subject` leads nowhere at the end of the commit.
  public static var noSubject: Self { Self("noSubject") }
}
