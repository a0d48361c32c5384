/// A versioned schema: entities with attributes and relationships, as a Core Data model.
///
/// Names are interned: every entity has a small ``EntityID`` and every property of an
/// entity a small ``PropertyID``. A sub-entity lists its parent's properties first, with
/// the parent's IDs, so one property has the same ID in every entity that has it.
///
/// ```swift
/// let model = try Model(name: "AddressBook", version: 1, entities: [
///   EntityDescription(name: "AddressBook", attributes: [
///     AttributeDescription(name: "firstName", type: .string),
///     AttributeDescription(name: "phone1", type: .string, isOptional: true),
///   ])
/// ])
/// ```
public struct Model: Sendable, Hashable {
  public let name: String
  public let version: Int
  /// The entities in declaration order; an entity's ``EntityID`` is its index here.
  public let entities: [Entity]
  /// Free text for the model's user: kept and written back, no meaning to the store.
  public let userInfo: [String: String]
  private let entityIndex: [String: EntityID]

  /// Builds and checks a model.
  ///
  /// - Throws: ``ModelError`` naming the entity and property at fault.
  public init(
    name: String, version: Int, entities descriptions: [EntityDescription], userInfo: [String: String] = [:]
  ) throws {
    self.name = name
    self.version = version
    self.userInfo = userInfo
    self.entities = try ModelBuilder(descriptions).build()
    var index: [String: EntityID] = [:]
    for e in entities { index[e.name] = e.id }
    self.entityIndex = index
    self.uniqueness = Self.uniquenessConstraints(entities)
    self.hasUniquenessConstraints = uniqueness.contains { !$0.isEmpty }
    self.hasPersonalAttributes = entities.contains { $0.hasPersonalAttributes }
  }

  /// Whether any entity has a personal attribute: a store of such a model is written only
  /// with its key-encryption key (Docs/privacy.md).
  public let hasPersonalAttributes: Bool

  /// The uniqueness constraints each entity's objects are held to, by ``EntityID``: its
  /// ancestors' first, then its own.
  public let uniqueness: [[UniquenessConstraint]]
  /// Whether any entity has a uniqueness constraint (a commit checks none otherwise).
  public let hasUniquenessConstraints: Bool

  private static func uniquenessConstraints(_ entities: [Entity]) -> [[UniquenessConstraint]] {
    entities.map { e in
      var chain: [Entity] = []
      var current: Entity? = e
      while let c = current {
        chain.insert(c, at: 0)
        current = c.parent.map { entities[Int($0.rawValue)] }
      }
      return chain.flatMap { owner in
        owner.uniquenessConstraints.enumerated().map {
          UniquenessConstraint(entity: owner.id, entityName: owner.name, index: $0.offset, attributes: $0.element)
        }
      }
    }
  }

  /// The entity with this name.
  public func entity(named name: String) -> Entity? {
    entityIndex[name].map { entities[Int($0.rawValue)] }
  }

  /// The entity with this ID.
  @inlinable
  public func entity(_ id: EntityID) -> Entity? {
    let i = Int(id.rawValue)
    return i < entities.count ? entities[i] : nil
  }

  /// The entity with this name, or an error naming it.
  public func requireEntity(_ name: String) throws(ModelError) -> Entity {
    guard let e = entity(named: name) else { throw .unknownEntity(name) }
    return e
  }

  /// Whether `entity` is `ancestor` or one of its sub-entities.
  @inlinable
  public func isKind(_ entity: EntityID, of ancestor: EntityID) -> Bool {
    var current: EntityID? = entity
    while let c = current {
      if c == ancestor { return true }
      current = self.entity(c)?.parent
    }
    return false
  }

  /// The entity and all its sub-entities, the entity first.
  public func descendants(of id: EntityID) -> [EntityID] {
    entities.filter { isKind($0.id, of: id) }.map(\.id)
  }

  /// The descriptions this model was built from (round trip to a model file).
  public var descriptions: [EntityDescription] { entities.map(\.description) }
}

/// One uniqueness constraint of an entity: no two objects of it (and its sub-entities) have
/// equal values in all of ``attributes``, unless one of those values is `nil`.
public struct UniquenessConstraint: Sendable, Hashable {
  /// The entity that declares it.
  public let entity: EntityID
  public let entityName: String
  /// Its place among the entity's constraints.
  public let index: Int
  public let attributes: [Attribute]

  /// The constraint as a model file writes it: `[club, number]`.
  public var text: String { "[" + attributes.map(\.name).joined(separator: ", ") + "]" }
}

/// A small integer naming an entity within one model version.
public struct EntityID: RawRepresentable, Sendable, Hashable, Comparable {
  public let rawValue: UInt16
  public init(rawValue: UInt16) { self.rawValue = rawValue }
  public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// A small integer naming a property (attribute or relationship) within one model version.
public struct PropertyID: RawRepresentable, Sendable, Hashable, Comparable {
  public let rawValue: UInt16
  public init(rawValue: UInt16) { self.rawValue = rawValue }
  public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// An entity of a checked model, with its inherited properties resolved.
///
/// A class, so that handing an entity around on the hot path costs one reference count.
public final class Entity: Sendable, Hashable {
  public let id: EntityID
  public let name: String
  public let parent: EntityID?
  public let isAbstract: Bool
  public let renamingIdentifier: String?
  /// The entity's own uniqueness constraints.
  ///
  /// No two objects of the entity and its sub-entities share the values of one constraint's
  /// attributes, unless one of those values is `nil`. A sub-entity's objects are held to
  /// its ancestors' constraints as well.
  public let uniquenessConstraints: [[Attribute]]
  /// Every property, inherited ones first; a property's ``PropertyID`` is its index here.
  public let properties: [Property]
  /// The description as written (own properties only).
  public let description: EntityDescription
  /// The type of each attribute by ``PropertyID`` (`nil` for relationships), for the hot path.
  public let attributeTypes: [AttributeType?]
  /// Whether each property is an indexed attribute, by ``PropertyID``.
  public let indexed: [Bool]
  /// Whether any attribute of the entity is indexed.
  public let hasIndexes: Bool
  /// Whether each property is a personal attribute, by ``PropertyID``.
  public let personal: [Bool]
  /// Whether any attribute of the entity is personal.
  public let hasPersonalAttributes: Bool
  /// The to-one relationships that lead to the subject of the entity's personal data.
  ///
  /// In order; empty when the object is its own subject. The object at the
  /// end may be of an entity with a path of its own, which is followed in turn.
  public let subjectPath: [PropertyID]
  @usableFromInline let index: [String: PropertyID]
  /// Property names by ``PropertyID``, and the IDs by a hash of the name's UTF-8 bytes.
  ///
  /// Open addressing, -1 for an empty slot: the lookup each `set` by name makes, at a
  /// fraction of the cost of `String` hashing. A miss falls back to `index`, which also
  /// finds a name spelled in another Unicode normalization.
  @usableFromInline let names: [String]
  @usableFromInline let quickIndex: [Int32]

  init(
    id: EntityID, name: String, uniquenessConstraints: [[Attribute]], parent: EntityID?, isAbstract: Bool,
    renamingIdentifier: String?, properties: [Property], description: EntityDescription,
    subjectPath: [PropertyID]
  ) {
    self.id = id
    self.subjectPath = subjectPath
    self.name = name
    self.uniquenessConstraints = uniquenessConstraints
    self.parent = parent
    self.isAbstract = isAbstract
    self.renamingIdentifier = renamingIdentifier
    self.properties = properties
    self.description = description
    var index: [String: PropertyID] = [:]
    for p in properties { index[p.name] = p.id }
    self.index = index
    self.names = properties.map(\.name)
    var slots = 8
    while slots < properties.count * 2 { slots *= 2 }
    var quick = [Int32](repeating: -1, count: slots)
    for p in properties {
      var slot = Self.quickHash(p.name) & (slots - 1)
      while quick[slot] >= 0 { slot = (slot + 1) & (slots - 1) }
      quick[slot] = Int32(p.id.rawValue)
    }
    self.quickIndex = quick
    self.attributeTypes = properties.map { if case .attribute(let a) = $0.kind { a.type } else { nil } }
    self.indexed = properties.map { if case .attribute(let a) = $0.kind { a.isIndexed } else { false } }
    self.hasIndexes = indexed.contains(true)
    self.personal = properties.map { if case .attribute(let a) = $0.kind { a.isPersonal } else { false } }
    self.hasPersonalAttributes = personal.contains(true)
    self.attributes = properties.compactMap { if case .attribute(let a) = $0.kind { a } else { nil } }
    self.relationships = properties.compactMap { if case .relationship(let r) = $0.kind { r } else { nil } }
    self.attributeSlots = properties.map { if case .attribute(let a) = $0.kind { a } else { nil } }
    self.requiredAttributes = attributes.filter { !$0.isOptional && !$0.isTransient }
    self.ruledAttributes = attributes.filter { $0.rules != nil || $0.isTransient }
    self.constrainedRelationships = relationships.filter {
      !$0.isOptional || $0.minCount != nil || $0.maxCount != nil
    }
  }

  public static func == (a: Entity, b: Entity) -> Bool {
    a.id == b.id && a.parent == b.parent && a.properties == b.properties && a.description == b.description
  }

  public func hash(into h: inout Hasher) {
    h.combine(id)
    h.combine(description)
  }

  /// The ID of the property with this name.
  @inlinable
  public func propertyID(named name: String) -> PropertyID? {
    let mask = quickIndex.count - 1
    var slot = Self.quickHash(name) & mask
    while true {
      let i = Int(quickIndex[slot])
      if i < 0 { break }
      if names[i] == name { return PropertyID(rawValue: UInt16(i)) }
      slot = (slot + 1) & mask
    }
    return index[name]
  }

  /// FNV-1a over the UTF-8 bytes: cheap for the short names of properties.
  @inlinable
  static func quickHash(_ name: String) -> Int {
    var h: UInt64 = 0xCBF2_9CE4_8422_2325
    for b in name.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01B3 }
    return Int(truncatingIfNeeded: h ^ (h >> 29))
  }

  /// The property with this name (inherited or own).
  @inlinable
  public func property(named name: String) -> Property? {
    propertyID(named: name).map { properties[Int($0.rawValue)] }
  }

  /// The property with this ID.
  ///
  /// Inlinable, as the lookups by name below: the store's hot paths match on the result's
  /// kind, and a call across the module would copy the whole property out each time.
  @inlinable
  public func property(_ id: PropertyID) -> Property? {
    let i = Int(id.rawValue)
    return i < properties.count ? properties[i] : nil
  }

  /// The attribute with this identifier; `nil` for a relationship's or one past the end.
  @inlinable
  public func attribute(_ id: PropertyID) -> Attribute? {
    let i = Int(id.rawValue)
    return i < attributeSlots.count ? attributeSlots[i] : nil
  }

  /// The attribute with this name.
  @inlinable
  public func attribute(named name: String) -> Attribute? {
    propertyID(named: name).flatMap { attributeSlots[Int($0.rawValue)] }
  }

  /// The relationship with this name.
  @inlinable
  public func relationship(named name: String) -> Relationship? {
    if case .relationship(let r)? = property(named: name)?.kind { return r }
    return nil
  }

  /// Every attribute, inherited ones first.
  ///
  /// Stored, not computed: inserts and validation read it for every object.
  public let attributes: [Attribute]

  /// Every relationship, inherited ones first.
  public let relationships: [Relationship]
  /// The rules a commit's validation checks on each object it touched, worked out once
  /// rather than per commit: the attributes that must have a value, and the relationships
  /// that must not be empty or whose count is bounded.
  package let requiredAttributes: [Attribute]
  package let constrainedRelationships: [Relationship]
  /// The attributes whose values have rules (``ValueRules``) to check, and the transient
  /// ones (which may hold none).
  package let ruledAttributes: [Attribute]
  /// Each attribute by ``PropertyID`` (`nil` for a relationship): a lookup by name (one per
  /// `set`) copies the attribute alone, not its property.
  @usableFromInline let attributeSlots: [Attribute?]
}

/// A property of an entity: an attribute or a relationship.
public struct Property: Sendable, Hashable {
  public enum Kind: Sendable, Hashable {
    case attribute(Attribute)
    case relationship(Relationship)
  }
  public let id: PropertyID
  public let name: String
  public let kind: Kind
}

/// A checked attribute.
public struct Attribute: Sendable, Hashable {
  public let id: PropertyID
  public let name: String
  public let type: AttributeType
  public let isOptional: Bool
  /// The default value, already converted to ``type``.
  public let defaultValue: Value?
  public let renamingIdentifier: String?
  public let isIndexed: Bool
  /// The range of values or lengths, and the pattern, values must keep; `nil` for none.
  public let rules: ValueRules?
  /// Written `transformable`: binary data made by the value transformer ``transformer``.
  public let isTransformable: Bool
  public let transformer: String?
  /// The store keeps no value for the attribute: a set is refused.
  public let isTransient: Bool
  /// The attribute holds a person's data: stored only sealed under the key of the
  /// object's subject (``Entity/subjectPath``) and erased with it.
  public let isPersonal: Bool
  public let userInfo: [String: String]
}

/// A checked relationship, with its inverse and destination resolved to IDs.
public struct Relationship: Sendable, Hashable {
  public let id: PropertyID
  public let name: String
  public let destination: EntityID
  public let isToMany: Bool
  public let isOrdered: Bool
  public let isOptional: Bool
  public let minCount: Int?
  public let maxCount: Int?
  /// The inverse relationship's ID in the destination entity.
  public let inverse: PropertyID?
  public let deleteRule: DeleteRule
  public let renamingIdentifier: String?
  /// The copy policy written in the model, if any.
  public let copyPolicy: CopyPolicy?
  public let userInfo: [String: String]
}

/// What deleting an object does to the objects on the other side of a relationship.
public enum DeleteRule: String, Sendable, Hashable, CaseIterable {
  /// Remove the link; the other object stays.
  case nullify
  /// Delete the other objects too.
  case cascade
  /// Refuse the delete while the relationship is not empty.
  case deny
  /// Remove the link (the store never keeps a dangling reference) without checking the
  /// other side's counts; see Docs/store.md.
  case noAction
}

/// How a clone treats a relationship.
public enum CopyPolicy: String, Sendable, Hashable, CaseIterable {
  case deep, reference, skip
}
