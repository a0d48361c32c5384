/// An entity as written in a model file or in Swift, before it is checked.
public struct EntityDescription: Sendable, Hashable {
  public var name: String
  public var parent: String?
  public var isAbstract: Bool
  public var renamingIdentifier: String?
  public var attributes: [AttributeDescription]
  public var relationships: [RelationshipDescription]

  public init(
    name: String, parent: String? = nil, isAbstract: Bool = false,
    renamingIdentifier: String? = nil,
    attributes: [AttributeDescription] = [], relationships: [RelationshipDescription] = []
  ) {
    self.name = name
    self.parent = parent
    self.isAbstract = isAbstract
    self.renamingIdentifier = renamingIdentifier
    self.attributes = attributes
    self.relationships = relationships
  }
}

/// An attribute as written, before it is checked.
public struct AttributeDescription: Sendable, Hashable {
  public var name: String
  public var type: AttributeType
  public var isOptional: Bool
  public var defaultValue: Value?
  public var renamingIdentifier: String?
  public var isIndexed: Bool

  public init(
    name: String, type: AttributeType, isOptional: Bool = false, defaultValue: Value? = nil,
    renamingIdentifier: String? = nil, isIndexed: Bool = false
  ) {
    self.name = name
    self.type = type
    self.isOptional = isOptional
    self.defaultValue = defaultValue
    self.renamingIdentifier = renamingIdentifier
    self.isIndexed = isIndexed
  }
}

/// A relationship as written, before it is checked.
public struct RelationshipDescription: Sendable, Hashable {
  public var name: String
  public var destination: String
  public var isToMany: Bool
  public var isOrdered: Bool
  public var isOptional: Bool
  public var minCount: Int?
  public var maxCount: Int?
  public var inverse: String?
  public var deleteRule: DeleteRule
  public var renamingIdentifier: String?
  public var copyPolicy: CopyPolicy?

  public init(
    name: String, destination: String, isToMany: Bool = false, isOrdered: Bool = false,
    isOptional: Bool = true, minCount: Int? = nil, maxCount: Int? = nil, inverse: String? = nil,
    deleteRule: DeleteRule = .nullify, renamingIdentifier: String? = nil,
    copyPolicy: CopyPolicy? = nil
  ) {
    self.name = name
    self.destination = destination
    self.isToMany = isToMany
    self.isOrdered = isOrdered
    self.isOptional = isOptional
    self.minCount = minCount
    self.maxCount = maxCount
    self.inverse = inverse
    self.deleteRule = deleteRule
    self.renamingIdentifier = renamingIdentifier
    self.copyPolicy = copyPolicy
  }
}
