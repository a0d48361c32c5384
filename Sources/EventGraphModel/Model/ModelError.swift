/// A model that cannot be used, with the entity and property at fault.
///
/// A struct rather than an enum, so that new kinds of fault can be added without
/// breaking callers (GRDB's `DatabaseError` and `ResultCode` do the same). Match on the
/// ``code`` and read the fields that say where:
///
/// ```swift
/// do {
///   model = try Model(contentsOf: "AddressBook.v2.model.json")
/// } catch let e as ModelError where e.code == .invalidFile {
///   print("\(e.file ?? "model"): \(e.detail ?? "")")
/// }
/// ```
///
/// Errors compare equal when their code and all their fields are equal.
public struct ModelError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What kind of fault an error is; compare with the constants (`e.code == .unknownEntity`).
  public typealias Code = ErrorCode<ModelError>

  /// What kind of fault this is.
  public let code: Code
  /// The entity at fault.
  public let entity: String?
  /// The attribute or relationship at fault.
  public let property: String?
  /// The name that is wrong: a missing parent, destination or inverse, or an invalid name.
  public let name: String?
  /// The model file (``ErrorCode/invalidFile``).
  public let file: String?
  /// What is wrong, in words.
  public let detail: String?

  private init(
    _ code: Code, entity: String? = nil, property: String? = nil, name: String? = nil, file: String? = nil,
    detail: String? = nil
  ) {
    self.code = code
    self.entity = entity
    self.property = property
    self.name = name
    self.file = file
    self.detail = detail
  }

  public var description: String {
    let (e, p, n, d) = (entity ?? "", property ?? "", name ?? "", detail ?? "")
    switch code {
    case .unknownEntity: return "unknown entity '\(e)'"
    case .duplicateEntity: return "entity '\(e)' is declared twice"
    case .duplicateProperty: return "\(e).\(p): property is declared twice"
    case .unknownParent: return "\(e): parent entity '\(n)' does not exist"
    case .inheritanceCycle: return "\(e): entity inheritance forms a cycle"
    case .unknownDestination: return "\(e).\(p): destination entity '\(n)' does not exist"
    case .unknownInverse: return "\(e).\(p): inverse '\(n)' does not exist in the destination"
    case .inverseMismatch: return "\(e).\(p): inverse '\(n)' \(d)"
    case .invalidDefault: return "\(e).\(p): invalid default: \(d)"
    case .invalidCounts, .invalidRule: return "\(e).\(p): \(d)"
    case .invalidConstraint: return "\(e): uniquenessConstraints \(n): \(d)"
    case .invalidSubject: return "\(e): subject '\(n)': \(d)"
    case .orderedToOne: return "\(e).\(p): 'ordered' needs 'toMany'"
    case .invalidName: return "invalid name '\(n)': names are letters, digits and '_', not starting with a digit"
    case .tooLarge: return "model too large: \(d)"
    case .invalidFile: return "\(file ?? ""): \(d)"
    default: return "model error \(code)"
    }
  }
}

// MARK: - The kinds of fault

extension ModelError {
  public static func unknownEntity(_ entity: String) -> Self { .init(.unknownEntity, entity: entity) }

  public static func duplicateEntity(_ entity: String) -> Self { .init(.duplicateEntity, entity: entity) }

  public static func duplicateProperty(entity: String, property: String) -> Self {
    .init(.duplicateProperty, entity: entity, property: property)
  }

  public static func unknownParent(entity: String, parent: String) -> Self {
    .init(.unknownParent, entity: entity, name: parent)
  }

  public static func inheritanceCycle(entity: String) -> Self { .init(.inheritanceCycle, entity: entity) }

  public static func unknownDestination(entity: String, relationship: String, destination: String) -> Self {
    .init(.unknownDestination, entity: entity, property: relationship, name: destination)
  }

  public static func unknownInverse(entity: String, relationship: String, inverse: String) -> Self {
    .init(.unknownInverse, entity: entity, property: relationship, name: inverse)
  }

  public static func inverseMismatch(entity: String, relationship: String, inverse: String, detail: String) -> Self {
    .init(.inverseMismatch, entity: entity, property: relationship, name: inverse, detail: detail)
  }

  public static func invalidDefault(entity: String, attribute: String, detail: String) -> Self {
    .init(.invalidDefault, entity: entity, property: attribute, detail: detail)
  }

  public static func invalidCounts(entity: String, relationship: String, detail: String) -> Self {
    .init(.invalidCounts, entity: entity, property: relationship, detail: detail)
  }

  public static func invalidRule(entity: String, attribute: String, detail: String) -> Self {
    .init(.invalidRule, entity: entity, property: attribute, detail: detail)
  }

  /// `constraint` is the constraint as written, `[a, b]`.
  public static func invalidConstraint(entity: String, constraint: String, detail: String) -> Self {
    .init(.invalidConstraint, entity: entity, name: constraint, detail: detail)
  }

  /// `subject` is the key path as written.
  public static func invalidSubject(entity: String, subject: String, detail: String) -> Self {
    .init(.invalidSubject, entity: entity, name: subject, detail: detail)
  }

  public static func orderedToOne(entity: String, relationship: String) -> Self {
    .init(.orderedToOne, entity: entity, property: relationship)
  }

  public static func invalidName(_ name: String) -> Self { .init(.invalidName, name: name) }

  public static func tooLarge(_ detail: String) -> Self { .init(.tooLarge, detail: detail) }

  public static func invalidFile(file: String, detail: String) -> Self {
    .init(.invalidFile, file: file, detail: detail)
  }
}

// MARK: - The codes

extension ErrorCode where Domain == ModelError {
  /// A name that is no entity of the model.
  public static var unknownEntity: Self { Self("unknownEntity") }
  /// Two entities of one name.
  public static var duplicateEntity: Self { Self("duplicateEntity") }
  /// Two properties of one name in an entity (with its parents).
  public static var duplicateProperty: Self { Self("duplicateProperty") }
  /// A parent entity that does not exist.
  public static var unknownParent: Self { Self("unknownParent") }
  /// Entities that inherit from each other.
  public static var inheritanceCycle: Self { Self("inheritanceCycle") }
  /// A relationship to an entity that does not exist.
  public static var unknownDestination: Self { Self("unknownDestination") }
  /// An inverse relationship that does not exist in the destination.
  public static var unknownInverse: Self { Self("unknownInverse") }
  /// An inverse relationship that does not lead back.
  public static var inverseMismatch: Self { Self("inverseMismatch") }
  /// A default value that does not fit its attribute.
  public static var invalidDefault: Self { Self("invalidDefault") }
  /// Minimum and maximum counts that contradict each other or the relationship.
  public static var invalidCounts: Self { Self("invalidCounts") }
  /// An ordered to-one relationship.
  public static var orderedToOne: Self { Self("orderedToOne") }
  /// A name that is not letters, digits and `_`.
  public static var invalidName: Self { Self("invalidName") }
  /// More entities or properties than the store's identifiers hold.
  public static var tooLarge: Self { Self("tooLarge") }
  /// A rule on an attribute's values that cannot hold or does not fit its type (a
  /// `minValue` on a string, a regular expression that does not compile, a default that
  /// breaks the rule).
  public static var invalidRule: Self { Self("invalidRule") }
  /// A uniqueness constraint naming no attribute of the entity, or one that cannot be.
  public static var invalidConstraint: Self { Self("invalidConstraint") }
  /// A subject key path that is not a chain of to-one relationships, or that leads back to
  /// where it started.
  public static var invalidSubject: Self { Self("invalidSubject") }
  /// A model file that cannot be read: the file, where, and what is wrong.
  public static var invalidFile: Self { Self("invalidFile") }
}
