import LMDB

/// Why the store refused an operation: what was wrong and where.
public enum StoreError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The directory is not an EventGraph store.
  case notAStore(path: String, detail: String)
  /// The store exists already (when creating).
  case alreadyExists(path: String)
  /// The store was written by a newer version of EventGraph.
  case newerFormat(path: String, found: Int, supported: Int)
  case unknownEntity(String)
  case abstractEntity(String)
  case unknownProperty(entity: String, property: String)
  case notAnAttribute(entity: String, property: String)
  case notARelationship(entity: String, property: String)
  /// A value of the wrong type for an attribute.
  case wrongType(object: String, attribute: String, detail: String)
  /// No object has this identity (it never existed, or it was deleted).
  case noSuchObject(String)
  /// The object is not of the entity the relationship leads to.
  case wrongDestination(object: String, relationship: String, target: String, expected: String)
  case invalidPosition(object: String, relationship: String, position: Int, count: Int)
  /// A commit broke a rule of the model: required value, counts, a deny delete rule.
  case validation(object: String, property: String, message: String)
  /// A stored event or record does not fit the model or the projection.
  case corrupt(String)
  /// The transaction was used after its closure returned.
  case transactionEnded
  case readOnly(path: String)
  /// The model version asked for is not in the store.
  case unknownModelVersion(Int)
  /// The store is already open in this process (LMDB allows one handle per process).
  case alreadyOpen(path: String)
  /// The store's active model version changed (an upcast or rollback) since it was opened.
  case versionChanged(path: String, opened: Int, active: Int)
  /// A sequence past the end of the log.
  case sequenceBeyondLog(UInt64, last: UInt64)
  /// The object was deleted (or, with a sequence, did not exist as of that sequence).
  case deletedObject(String, asOf: UInt64?)
  /// Two stores that must share a model do not (a clone across stores).
  case modelMismatch(source: String, target: String)
  /// A clone's `reference` would move the target away from the original, because the
  /// inverse relationship is to-one.
  case referenceWouldMove(object: String, relationship: String, target: String, inverse: String)
  /// A clone into another store cannot reference an object that is not copied with it.
  case referenceOutsideStore(object: String, relationship: String, target: String)
  /// A clone of the past cannot reference an object deleted since.
  case referenceToDeleted(object: String, relationship: String, target: String)
  case lmdb(LMDBError)

  public var description: String {
    switch self {
    case .notAStore(let p, let d): "\(p) is not an EventGraph store: \(d)"
    case .alreadyExists(let p): "\(p) already holds a store"
    case .newerFormat(let p, let f, let s):
      "\(p) was written by a newer EventGraph (store format \(f); this version reads up to \(s))"
    case .unknownEntity(let e): "unknown entity '\(e)'"
    case .abstractEntity(let e): "entity '\(e)' is abstract and cannot be inserted"
    case .unknownProperty(let e, let p): "entity '\(e)' has no property '\(p)'"
    case .notAnAttribute(let e, let p): "\(e).\(p) is a relationship, not an attribute"
    case .notARelationship(let e, let p): "\(e).\(p) is an attribute, not a relationship"
    case .wrongType(let o, let a, let d): "\(o).\(a): \(d)"
    case .noSuchObject(let o): "no object \(o)"
    case .wrongDestination(let o, let r, let t, let x): "\(o).\(r): \(t) is not a \(x)"
    case .invalidPosition(let o, let r, let p, let c): "\(o).\(r): position \(p) is outside 0...\(c)"
    case .validation(let o, let p, let m): "\(o).\(p): \(m)"
    case .corrupt(let d): "store is corrupt: \(d)"
    case .transactionEnded: "the transaction was used after its write closure returned"
    case .readOnly(let p): "\(p) is open read-only"
    case .unknownModelVersion(let v): "the store has no model version \(v)"
    case .alreadyOpen(let p): "\(p) is already open in this process: share the one EventStore object"
    case .versionChanged(let p, let o, let a):
      "\(p) was opened at model version \(o) but is now at version \(a): open it again"
    case .sequenceBeyondLog(let s, let last): "sequence \(s) is beyond the end of the log (last is \(last))"
    case .deletedObject(let o, nil): "\(o) was deleted"
    case .deletedObject(let o, let s?): "\(o) did not exist as of sequence \(s) (created later or deleted by then)"
    case .modelMismatch(let s, let t): "the stores have different models: \(s) here, \(t) in the target"
    case .referenceWouldMove(let o, let r, let t, let i):
      "\(o).\(r): referencing \(t) from the copy would take it from the original (its inverse '\(i)' is to-one); copy it deep or skip it"
    case .referenceOutsideStore(let o, let r, let t):
      "\(o).\(r): \(t) is not copied and cannot be referenced from another store; copy it deep or skip it"
    case .referenceToDeleted(let o, let r, let t):
      "\(o).\(r): \(t) has been deleted since and cannot be referenced from the copy; copy it deep or skip it"
    case .lmdb(let e): e.description
    }
  }
}

extension StoreError {
  init(_ e: CorruptionError) { self = .corrupt(e.description) }
}
