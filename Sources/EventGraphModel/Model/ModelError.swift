/// A model that cannot be used, with the entity and property at fault.
///
/// A struct rather than an enum, so that new kinds of fault can be added without
/// breaking callers (GRDB's `DatabaseError` and `ResultCode` do the same). Match on the
/// ``code``; the ``context`` says where, in the shape that belongs to the code, and
/// ``entity`` and ``property`` name the entity and property at fault whatever the code:
///
/// ```swift
/// do {
///   model = try Model(contentsOf: "AddressBook.v2.model.json")
/// } catch let e as ModelError where e.code == .invalidFile {
///   if case .file(let file, let problem) = e.context { print("\(file): \(problem)") }
/// }
/// ```
///
/// Only EventGraph makes these errors. Errors compare equal when their code and context
/// are equal.
public struct ModelError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What kind of fault an error is; compare with the constants (`e.code == .unknownEntity`).
  public typealias Code = ErrorCode<ModelError>

  /// What kind of fault this is.
  public let code: Code
  /// Where and what, in the shape that belongs to ``code`` (each case names its codes).
  public let context: Context

  /// Where a model is at fault, and what is wrong there.
  public enum Context: Sendable, Hashable {
    /// An entity: `unknownEntity`, ``ErrorCode/duplicateEntity``,
    /// ``ErrorCode/inheritanceCycle``.
    case entity(String)
    /// A property of an entity: ``ErrorCode/duplicateProperty``, ``ErrorCode/orderedToOne``.
    case property(entity: String, property: String)
    /// A name an entity (or one of its relationships, `property`) gives that leads nowhere:
    /// the parent of ``ErrorCode/unknownParent`` (no property), the destination of
    /// ``ErrorCode/unknownDestination``, the inverse of ``ErrorCode/unknownInverse``.
    case reference(entity: String, property: String?, name: String)
    /// What is wrong with a declaration of an entity: its property (`property`) or the
    /// constraint, subject or inverse named (`name`), and the problem in words.
    /// ``ErrorCode/inverseMismatch`` (both), ``ErrorCode/invalidDefault``,
    /// ``ErrorCode/invalidCounts``, `invalidRule` (a property),
    /// ``ErrorCode/invalidConstraint``, ``ErrorCode/invalidSubject`` (a name).
    case declaration(entity: String, property: String?, name: String?, problem: String)
    /// A name that is not one: `invalidName`.
    case name(String)
    /// What is too large: ``ErrorCode/tooLarge``.
    case size(String)
    /// A model file and what is wrong in it, with where: ``ErrorCode/invalidFile``.
    case file(String, problem: String)
    /// A fault of any other code, in a model read from a file: the file, and where in the
    /// model (the context the code has in a model built without a file).
    indirect case inFile(String, Context)
  }

  private init(_ code: Code, _ context: Context) {
    self.code = code
    self.context = context
  }

  /// The same fault, in a model read from `file`.
  func inFile(_ file: String) -> ModelError {
    switch context {
    case .file, .inFile: return self
    default: return ModelError(code, .inFile(file, context))
    }
  }

  /// The entity at fault, whatever the code (`nil` for a name, a size or a file).
  public var entity: String? {
    if case .inFile(_, let inner) = context { return ModelError(code, inner).entity }
    switch context {
    case .entity(let e), .property(let e, _), .reference(let e, _, _), .declaration(let e, _, _, _): return e
    case .name, .size, .file, .inFile: return nil
    }
  }

  /// The attribute or relationship at fault, whatever the code.
  public var property: String? {
    if case .inFile(_, let inner) = context { return ModelError(code, inner).property }
    switch context {
    case .property(_, let p): return p
    case .reference(_, let p, _), .declaration(_, let p, _, _): return p
    case .entity, .name, .size, .file, .inFile: return nil
    }
  }

  public var description: String {
    switch (code, context) {
    case (_, .inFile(let f, let inner)): return "\(f): \(ModelError(code, inner).description)"
    case (.unknownEntity, .entity(let e)): return "unknown entity '\(e)'"
    case (.duplicateEntity, .entity(let e)): return "entity '\(e)' is declared twice"
    case (.duplicateProperty, .property(let e, let p)): return "\(e).\(p): property is declared twice"
    case (.unknownParent, .reference(let e, _, let n)): return "\(e): parent entity '\(n)' does not exist"
    case (.inheritanceCycle, .entity(let e)): return "\(e): entity inheritance forms a cycle"
    case (.unknownDestination, .reference(let e, let p?, let n)):
      return "\(e).\(p): destination entity '\(n)' does not exist"
    case (.unknownInverse, .reference(let e, let p?, let n)):
      return "\(e).\(p): inverse '\(n)' does not exist in the destination"
    case (.inverseMismatch, .declaration(let e, let p?, let n?, let d)): return "\(e).\(p): inverse '\(n)' \(d)"
    case (.invalidDefault, .declaration(let e, let p?, _, let d)): return "\(e).\(p): invalid default: \(d)"
    case (.invalidCounts, .declaration(let e, let p?, _, let d)), (.invalidRule, .declaration(let e, let p?, _, let d)):
      return "\(e).\(p): \(d)"
    case (.invalidConstraint, .declaration(let e, _, let n?, let d)): return "\(e): uniquenessConstraints \(n): \(d)"
    case (.invalidSubject, .declaration(let e, _, let n?, let d)): return "\(e): subject '\(n)': \(d)"
    case (.orderedToOne, .property(let e, let p)): return "\(e).\(p): 'ordered' needs 'toMany'"
    case (.invalidName, .name(let n)):
      return "invalid name '\(n)': names are letters, digits and '_', not starting with a digit"
    case (.tooLarge, .size(let d)): return "model too large: \(d)"
    case (.invalidFile, .file(let f, let d)): return "\(f): \(d)"
    default: return "model error \(code)"
    }
  }
}

// MARK: - The kinds of fault

extension ModelError {
  static func unknownEntity(_ entity: String) -> Self { .init(.unknownEntity, .entity(entity)) }

  static func duplicateEntity(_ entity: String) -> Self { .init(.duplicateEntity, .entity(entity)) }

  static func duplicateProperty(entity: String, property: String) -> Self {
    .init(.duplicateProperty, .property(entity: entity, property: property))
  }

  static func unknownParent(entity: String, parent: String) -> Self {
    .init(.unknownParent, .reference(entity: entity, property: nil, name: parent))
  }

  static func inheritanceCycle(entity: String) -> Self { .init(.inheritanceCycle, .entity(entity)) }

  static func unknownDestination(entity: String, relationship: String, destination: String) -> Self {
    .init(.unknownDestination, .reference(entity: entity, property: relationship, name: destination))
  }

  static func unknownInverse(entity: String, relationship: String, inverse: String) -> Self {
    .init(.unknownInverse, .reference(entity: entity, property: relationship, name: inverse))
  }

  static func inverseMismatch(entity: String, relationship: String, inverse: String, detail: String) -> Self {
    .init(.inverseMismatch, .declaration(entity: entity, property: relationship, name: inverse, problem: detail))
  }

  static func invalidDefault(entity: String, attribute: String, detail: String) -> Self {
    .init(.invalidDefault, .declaration(entity: entity, property: attribute, name: nil, problem: detail))
  }

  static func invalidCounts(entity: String, relationship: String, detail: String) -> Self {
    .init(.invalidCounts, .declaration(entity: entity, property: relationship, name: nil, problem: detail))
  }

  static func invalidRule(entity: String, attribute: String, detail: String) -> Self {
    .init(.invalidRule, .declaration(entity: entity, property: attribute, name: nil, problem: detail))
  }

  /// `constraint` is the constraint as written, `[a, b]`.
  static func invalidConstraint(entity: String, constraint: String, detail: String) -> Self {
    .init(.invalidConstraint, .declaration(entity: entity, property: nil, name: constraint, problem: detail))
  }

  /// `subject` is the key path as written.
  static func invalidSubject(entity: String, subject: String, detail: String) -> Self {
    .init(.invalidSubject, .declaration(entity: entity, property: nil, name: subject, problem: detail))
  }

  static func orderedToOne(entity: String, relationship: String) -> Self {
    .init(.orderedToOne, .property(entity: entity, property: relationship))
  }

  static func invalidName(_ name: String) -> Self { .init(.invalidName, .name(name)) }

  static func tooLarge(_ detail: String) -> Self { .init(.tooLarge, .size(detail)) }

  static func invalidFile(file: String, detail: String) -> Self { .init(.invalidFile, .file(file, problem: detail)) }
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

  /// Every code of the domain, in the order they are declared: the suite meets each with
  /// the operation that makes it.
  static let all: [Self] = [
    .unknownEntity, .duplicateEntity, .duplicateProperty, .unknownParent, .inheritanceCycle, .unknownDestination,
    .unknownInverse, .inverseMismatch, .invalidDefault, .invalidCounts, .orderedToOne, .invalidName, .tooLarge,
    .invalidRule, .invalidConstraint, .invalidSubject, .invalidFile,
  ]
}
