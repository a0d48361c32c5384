import EventGraphModel

/// A predicate checked against a model and ready to evaluate, many times, on any thread.
///
/// ```swift
/// let hasPhone = try CompiledPredicate.compile(
///   "phone1 != nil || phone2 != nil", entity: addressBook.id, model: model)
/// if try hasPhone.evaluate(object, in: store) { … }
/// ```
///
/// Key paths are resolved to property IDs once; evaluation looks up no names and, for
/// comparisons of attributes with constants, allocates nothing.
public struct CompiledPredicate: Sendable, CustomStringConvertible {
  /// The syntax tree the predicate was compiled from.
  let predicate: QueryPredicate
  /// The entity whose objects the predicate evaluates (and its sub-entities).
  public let entity: EntityID
  @usableFromInline let code: PredicateCode

  /// Parses, checks and compiles predicate text.
  ///
  /// - Parameters:
  ///   - text: The predicate, e.g. `lastName BEGINSWITH[c] 'ta' AND age >= 18`.
  ///   - entity: The entity of the objects it will be evaluated on.
  ///   - model: The model that defines the entity.
  ///   - variables: The type of each `$variable` the text may use (name without `$`).
  /// - Throws: ``QueryError`` with the position of the part at fault: a syntax error,
  ///   an unknown property or variable, incompatible operand types, a to-many key path
  ///   where one value is needed, a misplaced aggregate, an invalid `MATCHES` pattern.
  public static func compile(
    _ text: String, entity: EntityID, model: Model, variables: [String: QueryType] = [:]
  ) throws(QueryError) -> CompiledPredicate {
    var parser = try QueryParser(text, mode: .predicate)
    let tree = try parser.parseWholePredicate()
    return try compile(tree, entity: entity, model: model, variables: variables, source: parser.source)
  }

  /// Checks and compiles a syntax tree (errors then carry no offsets).
  static func compile(
    _ predicate: QueryPredicate, entity: EntityID, model: Model, variables: [String: QueryType] = [:]
  ) throws(QueryError) -> CompiledPredicate {
    try compile(predicate, entity: entity, model: model, variables: variables, source: nil)
  }

  private static func compile(
    _ predicate: QueryPredicate, entity: EntityID, model: Model, variables: [String: QueryType],
    source: QuerySourceText?
  ) throws(QueryError) -> CompiledPredicate {
    let checker = try QueryChecker(model: model, entity: entity, variables: variables, source: source)
    guard predicate.depth <= QueryPredicate.maximumDepth else {
      throw QueryError(.tooDeep, "nested more than \(QueryPredicate.maximumDepth) levels deep", offset: nil)
    }
    return CompiledPredicate(predicate: predicate, entity: entity, code: try checker.predicate(predicate))
  }

  private init(predicate: QueryPredicate, entity: EntityID, code: PredicateCode) {
    self.predicate = predicate
    self.entity = entity
    self.code = code
  }

  /// Whether `object` satisfies the predicate.
  ///
  /// - Parameters:
  ///   - object: An object of the entity the predicate was compiled for.
  ///   - source: Where attribute values and related objects are read.
  ///   - variables: A value for each `$variable` the predicate uses, shaped as declared.
  /// - Throws: What `source` throws; ``QueryError`` for an unbound variable, a division
  ///   by zero or an integer overflow in arithmetic, or a computed `MATCHES` pattern
  ///   that is not a regular expression.
  @inlinable
  public func evaluate<S: QueryObjectSource>(
    _ object: S.Object, in source: S, variables: [String: QueryVariable<S.Object>] = [:]
  ) throws -> Bool {
    try code.evaluate(object, EvaluationContext(source: source, variables: variables))
  }

  /// The canonical text of the predicate.
  public var description: String { predicate.description }
}

extension QueryChecker {
  init(model: Model, entity id: EntityID, variables: [String: QueryType], source: QuerySourceText?) throws(QueryError) {
    guard let entity = model.entity(id) else {
      throw QueryError(.unknownProperty, "the model has no entity #\(id.rawValue)", offset: nil)
    }
    self.init(model: model, entity: entity, variables: variables, source: source)
  }
}
