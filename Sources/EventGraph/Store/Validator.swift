/// Checks the rules of the model on the objects a commit touched: required attributes
/// have a value, values keep their attribute's rules (``ValueRules``), transient attributes
/// have none, required relationships are not empty, counts are within min/max.
struct Validator<G: ValidatedGraph> {
  let model: Model
  let graph: G

  func validate(_ objects: [ObjectID]) throws {
    for id in objects {
      guard let s = try graph.validatedObject(id) else { continue }  // deleted
      guard let e = model.entity(s.entity) else { continue }
      for a in e.requiredAttributes where try !s.hasValue(a.id) {
        throw StoreError.validation(
          object: graph.objectName(id), property: a.name, rule: .required, message: "required attribute has no value")
      }
      for a in e.ruledAttributes {
        guard let v = try s.value(a.id) else { continue }
        if a.isTransient {
          throw StoreError.validation(
            object: graph.objectName(id), property: a.name, rule: .transient,
            message: "transient attribute: the store keeps no value")
        }
        // A personal value's rules were checked when it was set, before it was sealed.
        if v.isSealed { continue }
        if let broken = a.rules?.breach(v) {
          throw StoreError.validation(
            object: graph.objectName(id), property: a.name, rule: broken.rule, message: broken.message)
        }
      }
      for r in e.constrainedRelationships {
        let count = try graph.relatedCount(id, r.id)
        if !r.isOptional && count == 0 {
          throw StoreError.validation(
            object: graph.objectName(id), property: r.name, rule: .required, message: "required relationship is empty")
        }
        if let lo = r.minCount, count < lo, count > 0 || !r.isOptional {
          throw StoreError.validation(
            object: graph.objectName(id), property: r.name, rule: .minCount,
            message: "has \(count) objects, fewer than minCount \(lo)")
        }
        if let hi = r.maxCount, count > hi {
          throw StoreError.validation(
            object: graph.objectName(id), property: r.name, rule: .maxCount,
            message: "has \(count) objects, more than maxCount \(hi)")
        }
      }
    }
  }
}

/// What the validator reads of an object: its entity, which attributes have a value, and
/// the values of those with rules.
protocol ValidatedObject {
  var entity: EntityID { get }
  func hasValue(_ attribute: PropertyID) throws -> Bool
  func value(_ attribute: PropertyID) throws -> Value?
}

extension ObjectState: ValidatedObject {
  func hasValue(_ attribute: PropertyID) -> Bool { self[attribute] != nil }
  func value(_ attribute: PropertyID) -> Value? { self[attribute] }
}

extension ProjectedObject: ValidatedObject {}

/// A graph the validator reads: one that may give an object without decoding its values,
/// and count a relationship's targets without building the list.
protocol ValidatedGraph: GraphReading {
  associatedtype Object: ValidatedObject = ObjectState
  /// The live object, as far as the validator reads it; `nil` when it was deleted.
  func validatedObject(_ id: ObjectID) throws -> Object?
  /// The number of targets of a relationship.
  func relatedCount(_ id: ObjectID, _ relationship: PropertyID) throws -> Int
}

extension ValidatedGraph {
  func relatedCount(_ id: ObjectID, _ relationship: PropertyID) throws -> Int {
    try related(id, relationship).count
  }
}

extension ValidatedGraph where Object == ObjectState {
  func validatedObject(_ id: ObjectID) throws -> ObjectState? { try object(id) }
}

extension Transaction: ValidatedGraph {
  /// The object's record: a commit that set one value of an object decodes none to check
  /// that its required attributes have one.
  func validatedObject(_ id: ObjectID) throws -> ProjectedObject? {
    try checkOpen()
    return try projector.record(id)
  }

  /// Counted without reading the list: an ordered list keeps its length.
  func relatedCount(_ id: ObjectID, _ relationship: PropertyID) throws -> Int {
    try checkOpen()
    let reader = projector.reader
    guard let e = try reader.entity(of: id), case .relationship(let r)? = model.entity(e)?.property(relationship)?.kind
    else { return try related(id, relationship).count }
    return try reader.relatedCount(id, r)
  }
}
