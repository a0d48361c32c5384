/// An entity as written in a model file or in Swift, before it is checked.
public struct EntityDescription: Sendable, Hashable {
  public var name: String
  public var parent: String?
  public var isAbstract: Bool
  public var renamingIdentifier: String?
  public var attributes: [AttributeDescription]
  public var relationships: [RelationshipDescription]
  /// Each constraint a list of attribute names (inherited ones allowed) whose values no two
  /// objects of the entity and its sub-entities share (Core Data's uniqueness constraints).
  public var uniquenessConstraints: [[String]]
  /// Whose personal data the entity's objects hold.
  ///
  /// `nil` for themselves, or a key path of
  /// to-one relationships (`"addressBook"`, `"order.customer"`) to the object that is the
  /// subject of their personal attributes (Docs/privacy.md). A sub-entity without one
  /// takes its parent's.
  public var subject: String?
  /// Free text for the model's user: kept and written back, no meaning to the store.
  public var userInfo: [String: String]

  public init(
    name: String, parent: String? = nil, isAbstract: Bool = false,
    renamingIdentifier: String? = nil,
    attributes: [AttributeDescription] = [], relationships: [RelationshipDescription] = [],
    uniquenessConstraints: [[String]] = [], subject: String? = nil, userInfo: [String: String] = [:]
  ) {
    self.subject = subject
    self.name = name
    self.parent = parent
    self.isAbstract = isAbstract
    self.renamingIdentifier = renamingIdentifier
    self.attributes = attributes
    self.relationships = relationships
    self.uniquenessConstraints = uniquenessConstraints
    self.userInfo = userInfo
  }
}

/// An attribute as written, before it is checked.
///
/// A `transformable` attribute of a model file is a ``AttributeType/binary`` attribute with
/// ``isTransformable`` set: its values are bytes, and ``transformer`` names the value
/// transformer that made them (kept, with no effect on the store).
public struct AttributeDescription: Sendable, Hashable {
  public var name: String
  public var type: AttributeType
  public var isOptional: Bool
  public var defaultValue: Value?
  public var renamingIdentifier: String?
  public var isIndexed: Bool
  /// The smallest and greatest value allowed (numbers and dates), of the attribute's type.
  public var minValue: Value?
  public var maxValue: Value?
  /// The fewest and most UTF-16 code units of a string, or bytes of binary data.
  public var minLength: Int?
  public var maxLength: Int?
  /// An ICU regular expression the whole of a string value must match.
  public var regularExpression: String?
  /// Written `transformable` in a model file: binary data made by a value transformer.
  public var isTransformable: Bool
  /// The value transformer's name, of a transformable attribute.
  public var transformer: String?
  /// The store keeps no value for it (Core Data's transient attribute): a set is refused.
  public var isTransient: Bool
  /// A person's data: stored only encrypted under the key of the object's subject, and
  /// erased with it (Docs/privacy.md).
  public var isPersonal: Bool
  /// Free text for the model's user: kept and written back, no meaning to the store.
  public var userInfo: [String: String]

  public init(
    name: String, type: AttributeType, isOptional: Bool = false, defaultValue: Value? = nil,
    renamingIdentifier: String? = nil, isIndexed: Bool = false, minValue: Value? = nil, maxValue: Value? = nil,
    minLength: Int? = nil, maxLength: Int? = nil, regularExpression: String? = nil,
    isTransformable: Bool = false, transformer: String? = nil, isTransient: Bool = false,
    isPersonal: Bool = false, userInfo: [String: String] = [:]
  ) {
    self.isPersonal = isPersonal
    self.name = name
    self.type = type
    self.isOptional = isOptional
    self.defaultValue = defaultValue
    self.renamingIdentifier = renamingIdentifier
    self.isIndexed = isIndexed
    self.minValue = minValue
    self.maxValue = maxValue
    self.minLength = minLength
    self.maxLength = maxLength
    self.regularExpression = regularExpression
    self.isTransformable = isTransformable
    self.transformer = transformer
    self.isTransient = isTransient
    self.userInfo = userInfo
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
  /// Free text for the model's user: kept and written back, no meaning to the store.
  public var userInfo: [String: String]

  public init(
    name: String, destination: String, isToMany: Bool = false, isOrdered: Bool = false,
    isOptional: Bool = true, minCount: Int? = nil, maxCount: Int? = nil, inverse: String? = nil,
    deleteRule: DeleteRule = .nullify, renamingIdentifier: String? = nil,
    copyPolicy: CopyPolicy? = nil, userInfo: [String: String] = [:]
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
    self.userInfo = userInfo
  }
}
