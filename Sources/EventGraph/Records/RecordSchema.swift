import EventGraphLocking

/// A record type checked against one entity of a model: each property of the record with
/// the entity's property of that name and the Swift type it is read as.
///
/// Made once per record type and model (kept in a cache keyed by the type, checked by the
/// entity's identity), so a fetch or an insert checks nothing per object.
final class RecordSchema: Sendable {
  /// A property of the record and the entity's property it reads and writes (a class:
  /// the readers and writers pass fields around per value, and a reference costs less to
  /// copy than an attribute's description).
  final class Field: Sendable {
    let key: String
    let property: PropertyID
    let type: RecordFieldType
    /// Whether the record's property is an optional.
    let isOptional: Bool
    /// The entity's attribute, or its relationship.
    let attribute: Attribute?
    let relationship: Relationship?
    /// The attribute's type; `nil` for a relationship.
    let attributeType: AttributeType?

    init(
      key: String, property: PropertyID, type: RecordFieldType, isOptional: Bool, attribute: Attribute?,
      relationship: Relationship?
    ) {
      self.key = key
      self.property = property
      self.type = type
      self.isOptional = isOptional
      self.attribute = attribute
      self.relationship = relationship
      self.attributeType = attribute?.type
    }
  }

  let entity: Entity
  let fields: [Field]
  /// The index in ``fields`` by ``PropertyID`` (-1 for a property the record does not have).
  let fieldIndex: [Int]

  init(entity: Entity, fields: [Field], fieldIndex: [Int]) {
    self.entity = entity
    self.fields = fields
    self.fieldIndex = fieldIndex
  }

  /// The field of the entity's property `name`, when the record has one.
  func field(_ name: String) -> Field? { position(name).map { fields[$0] } }

  /// The index in ``fields`` of the field of the entity's property `name`.
  func position(_ name: String) -> Int? {
    guard let p = entity.propertyID(named: name) else { return nil }
    let i = fieldIndex[Int(p.rawValue)]
    return i >= 0 ? i : nil
  }

  private static let cache = Locked<[ObjectIdentifier: [RecordSchema]]>([:])
  private static let modelsKept = 8

  /// The schema of `R` in `model`, checked at its first use and kept.
  ///
  /// - Throws: ``RecordError`` naming the entity, property and Swift type that do not fit.
  static func of<R: Record>(_ type: R.Type, in model: Model) throws -> RecordSchema {
    guard let entity = model.entity(named: R.entityName) else {
      throw RecordError(
        .doesNotFitModel, record: R.self, entity: R.entityName, detail: "the model has no entity \(R.entityName)")
    }
    let key = ObjectIdentifier(R.self)
    if let known = cache.withLock({ $0[key]?.first { $0.entity === entity } }) { return known }
    let schema = try check(R.self, entity: entity, model: model)
    cache.withLock {
      // A few models per type (a process that opens store after store makes a model each
      // time): the oldest checks are dropped rather than kept for ever.
      $0[key, default: []].append(schema)
      if $0[key, default: []].count > Self.modelsKept { $0[key]?.removeFirst() }
    }
    return schema
  }

  private static func check<R: Record>(_ type: R.Type, entity: Entity, model: Model) throws -> RecordSchema {
    let probe = RecordProbe(record: R.self, entity: entity.name)
    do {
      _ = try R(from: probe)
    } catch let e as RecordError {
      throw e
    } catch {
      throw RecordError(
        .checkFailed, record: R.self, entity: entity.name, detail: "its decoding failed in a probe: \(error)")
    }
    var fields: [Field] = []
    var fieldIndex = [Int](repeating: -1, count: entity.properties.count)
    for found in probe.fields.fields {
      let field = try checkField(found, of: R.self, entity: entity, model: model)
      fieldIndex[Int(field.property.rawValue)] = fields.count
      fields.append(field)
    }
    return RecordSchema(entity: entity, fields: fields, fieldIndex: fieldIndex)
  }

  private static func checkField<R: Record>(
    _ found: RecordProbe.Found, of record: R.Type, entity: Entity, model: Model
  ) throws -> Field {
    func refuse(_ detail: String, _ code: RecordError.Code = .doesNotFitModel) -> RecordError {
      RecordError(
        code, record: R.self, entity: entity.name, property: found.key, swiftType: found.swiftName, detail: detail)
    }
    guard let p = entity.property(named: found.key) else {
      throw refuse("the entity has no property \(found.key)")
    }
    guard let type = found.type else {
      throw refuse("a record holds no value of this type (see the table in Docs/guide.md)", .unsupportedType)
    }
    switch p.kind {
    case .attribute(let a):
      if case .ref = type { throw refuse("\(a.name) is an attribute of type \(a.type.rawValue), not a relationship") }
      guard type.fits(a.type) else { throw refuse("attribute \(a.name) has type \(a.type.rawValue)") }
      if a.isOptional && !found.isOptional {
        throw refuse("attribute \(a.name) is optional in the model: the property must be an optional")
      }
      return Field(
        key: found.key, property: p.id, type: type, isOptional: found.isOptional, attribute: a, relationship: nil)
    case .relationship(let r):
      let destination = model.entity(r.destination)?.name ?? "?"
      guard case .ref(let target, let toMany) = type else {
        throw refuse("\(r.name) is a relationship to \(destination): a Ref<\(destination)> or an array of them")
      }
      guard toMany == r.isToMany else {
        throw refuse(
          r.isToMany
            ? "\(r.name) is a to-many relationship: an array of Ref" : "\(r.name) is a to-one relationship: a Ref")
      }
      guard let t = model.entity(named: target), model.isKind(r.destination, of: t.id) else {
        throw refuse("\(r.name) leads to \(destination), which is not a kind of \(target)")
      }
      if !toMany && r.isOptional && !found.isOptional {
        throw refuse("relationship \(r.name) is optional in the model: the property must be an optional")
      }
      return Field(
        key: found.key, property: p.id, type: type, isOptional: found.isOptional, attribute: nil, relationship: r)
    }
  }
}
