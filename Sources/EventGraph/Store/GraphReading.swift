/// Reading the object graph: what a snapshot and a write transaction both offer.
///
/// The primitives take interned IDs; the extensions below add the name-based forms.
public protocol GraphReading {
  /// The model the graph is read under.
  var model: Model { get }
  /// The live object's state; `nil` when the identity is unknown or the object was deleted.
  func object(_ id: ObjectID) throws -> ObjectState?
  /// The entity an identity was created with (kept after a delete).
  func entityID(of id: ObjectID) throws -> EntityID?
  /// The targets of a relationship, in order when it is ordered.
  func related(_ id: ObjectID, _ relationship: PropertyID) throws -> [ObjectID]
  /// The live objects of an entity and its sub-entities, in identity order.
  func objects(of entity: EntityID) throws -> [ObjectID]
}

extension GraphReading {
  /// `Entity/N` for an object (or `#N` for an unknown identity).
  public func display(_ id: ObjectID) -> String {
    guard let e = try? entityID(of: id), let entity = model.entity(e) else { return "#\(id.rawValue)" }
    return "\(entity.name)/\(id.rawValue)"
  }

  /// An object as errors name it: its entity and identity.
  func objectName(_ id: ObjectID) -> StoreError.ObjectName {
    let entity = (try? entityID(of: id)).flatMap { model.entity($0) }
    return StoreError.ObjectName(entity: entity?.name, id: id)
  }

  /// The live object named `Entity/N` (an ancestor entity's name is accepted too).
  ///
  /// - Throws: ``ErrorCode/invalidIdentity`` for text that is not an identity,
  ///   ``ErrorCode/noSuchObject`` when the object does not exist or was deleted.
  public func resolve(_ text: String) throws -> ObjectID {
    guard let (name, id) = ObjectID.parse(text) else { throw StoreError.invalidIdentity(text) }
    guard let named = model.entity(named: name) else { throw StoreError.unknownEntity(name) }
    guard let e = try entityID(of: id), model.isKind(e, of: named.id), try object(id) != nil else {
      throw StoreError.noSuchObject(StoreError.ObjectName(entity: name, id: id))
    }
    return id
  }

  /// The live object's state, or an error naming it.
  public func requireObject(_ id: ObjectID) throws -> ObjectState {
    guard let s = try object(id) else { throw StoreError.noSuchObject(objectName(id)) }
    return s
  }

  /// The entity of a live object.
  public func entity(of id: ObjectID) throws -> Entity {
    let s = try requireObject(id)
    guard let e = model.entity(s.entity) else { throw StoreError.corrupt("unknown entity id \(s.entity.rawValue)") }
    return e
  }

  /// The value of an attribute by name.
  public func value(_ id: ObjectID, _ attribute: String) throws -> Value? {
    let s = try requireObject(id)
    let a = try model.attribute(attribute, of: s.entity)
    return s[a.id]
  }

  /// The targets of a relationship by name.
  public func related(_ id: ObjectID, _ relationship: String) throws -> [ObjectID] {
    let s = try requireObject(id)
    return try related(id, try model.relationship(relationship, of: s.entity).id)
  }

  /// The live objects of an entity (and its sub-entities) by name.
  public func objects(of entity: String) throws -> [ObjectID] {
    guard let e = model.entity(named: entity) else { throw StoreError.unknownEntity(entity) }
    return try objects(of: e.id)
  }
}

extension Model {
  /// The attribute `name` of an entity, or an error naming both.
  func attribute(_ name: String, of id: EntityID) throws(StoreError) -> Attribute {
    guard let e = entity(id) else { throw .corrupt("unknown entity id \(id.rawValue)") }
    if let a = e.attribute(named: name) { return a }
    guard e.propertyID(named: name) != nil else { throw .unknownProperty(e, property: name) }
    throw .notAnAttribute(entity: e.name, property: name)
  }

  /// The ID and type of attribute `name` of an entity, or the error ``attribute(_:of:)``
  /// gives: what a `set` needs, without copying the attribute.
  func attributeSlot(_ name: String, of id: EntityID) throws(StoreError) -> (id: PropertyID, type: AttributeType) {
    if let e = entity(id), let p = e.propertyID(named: name), let type = e.attributeTypes[Int(p.rawValue)] {
      return (p, type)
    }
    let a = try attribute(name, of: id)
    return (a.id, a.type)
  }

  /// The relationship `name` of an entity, or an error naming both.
  func relationship(_ name: String, of id: EntityID) throws(StoreError) -> Relationship {
    guard let e = entity(id) else { throw .corrupt("unknown entity id \(id.rawValue)") }
    guard let p = e.property(named: name) else { throw .unknownProperty(e, property: name) }
    guard case .relationship(let r) = p.kind else { throw .notARelationship(entity: e.name, property: name) }
    return r
  }
}
