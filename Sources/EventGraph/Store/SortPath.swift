/// A sort key resolved against an entity: to-one relationships, then an attribute
/// (`company.name`, or `name` alone).
struct SortPath {
  let relationships: [Relationship]
  let attribute: Attribute

  /// - Throws: ``StoreError`` naming the entity and the name that is not a to-one
  ///   relationship (on the way) or an attribute (at the end).
  init(_ key: String, from entity: Entity, in model: Model) throws {
    let names = key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    var current = entity
    var steps: [Relationship] = []
    for name in names.dropLast() {
      guard let r = current.relationship(named: name) else {
        throw current.property(named: name) == nil
          ? StoreError.unknownProperty(current, property: name)
          : StoreError.notARelationship(entity: current.name, property: name)
      }
      guard !r.isToMany, let next = model.entity(r.destination) else {
        throw StoreError.invalidSortKey(
          entity: entity.name, key: key,
          detail: "\(current.name).\(name) is to-many; a sort key follows to-one relationships")
      }
      steps.append(r)
      current = next
    }
    let last = names.last ?? key
    guard let a = current.attribute(named: last) else {
      throw current.property(named: last) == nil
        ? StoreError.unknownProperty(current, property: last)
        : StoreError.notAnAttribute(entity: current.name, property: last)
    }
    relationships = steps
    attribute = a
  }

  /// The value at the end of the path from `object`; `nil` when a relationship on the way
  /// is empty.
  func value<S: QueryObjectSource>(of object: ObjectID, in source: S) throws -> Value? where S.Object == ObjectID {
    var o = object
    for r in relationships {
      guard let next = try source.related(to: o, relationship: r.id).first else { return nil }
      o = next
    }
    return try source.value(of: o, attribute: attribute.id)
  }
}
