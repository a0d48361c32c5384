import EventGraphModel

/// A value expression checked against a model and ready to evaluate: a mapping's
/// attribute value (`$source.phone1`), a relationship's sources (`$source.employees`).
///
/// ```swift
/// let fullName = try CompiledExpression.compile(
///   "concat($source.firstName, ' ', $source.lastName)", entity: addressBook.id, model: model,
///   variables: ["source": .object(addressBook.id)])
/// let name = try fullName.evaluate(object, in: store, variables: ["source": .object(object)])
/// ```
public struct CompiledExpression: Sendable, CustomStringConvertible {
  /// The syntax tree the expression was compiled from.
  let expression: QueryExpression
  /// The entity of the object the expression is evaluated on.
  public let entity: EntityID
  /// What the expression gives: one value, a collection of values, or objects.
  public let resultType: QueryType
  @usableFromInline let code: ExpressionCode

  /// Parses, checks and compiles expression text.
  ///
  /// - Throws: ``QueryError`` with the position of the part at fault, as
  ///   compiling a predicate does.
  public static func compile(
    _ text: String, entity: EntityID, model: Model, variables: [String: QueryType] = [:]
  ) throws(QueryError) -> CompiledExpression {
    var parser = try QueryParser(text, mode: .expression)
    let tree = try parser.parseWholeExpression()
    return try compile(tree, entity: entity, model: model, variables: variables, source: parser.source)
  }

  /// Parses expression text, without a model: throws a syntax error, with its position,
  /// before anything is checked or evaluated (compile the text for each entity it meets).
  public static func checkSyntax(_ text: String) throws(QueryError) {
    var parser = try QueryParser(text, mode: .expression)
    _ = try parser.parseWholeExpression()
  }

  /// Checks and compiles a syntax tree (errors then carry no offsets).
  static func compile(
    _ expression: QueryExpression, entity: EntityID, model: Model, variables: [String: QueryType] = [:]
  ) throws(QueryError) -> CompiledExpression {
    try compile(expression, entity: entity, model: model, variables: variables, source: nil)
  }

  private static func compile(
    _ expression: QueryExpression, entity: EntityID, model: Model, variables: [String: QueryType],
    source: QuerySourceText?
  ) throws(QueryError) -> CompiledExpression {
    let checker = try QueryChecker(model: model, entity: entity, variables: variables, source: source)
    guard expression.depth <= QueryPredicate.maximumDepth else {
      throw QueryError(.tooDeep, "nested more than \(QueryPredicate.maximumDepth) levels deep", offset: nil)
    }
    let checked = try checker.expression(expression)
    let code: ExpressionCode =
      switch checked {
      case .value(let c, _): .value(c)
      case .values(let c, _): .values(c)
      case .objects(let c, _): .objects(c)
      }
    return CompiledExpression(expression: expression, entity: entity, resultType: checked.type, code: code)
  }

  private init(expression: QueryExpression, entity: EntityID, resultType: QueryType, code: ExpressionCode) {
    self.expression = expression
    self.entity = entity
    self.resultType = resultType
    self.code = code
  }

  /// The one value of the expression (nil when it has none).
  ///
  /// - Throws: What `source` throws; ``QueryError`` for an unbound variable, a division
  ///   by zero or an overflow, or (kind `.wrongResultShape`) when ``resultType`` is a
  ///   collection or objects.
  @inlinable
  public func evaluate<S: QueryObjectSource>(
    _ object: S.Object, in source: S, variables: [String: QueryVariable<S.Object>] = [:]
  ) throws -> Value? {
    guard case .value(let c) = code else {
      throw QueryError(.wrongResultShape, "\(self) gives \(resultType), not one value", offset: nil)
    }
    return try c.evaluate(object, EvaluationContext(source: source, variables: variables))
  }

  /// The values of the expression: a collection's values, or the one value in an array.
  ///
  /// - Throws: As ``evaluate(_:in:variables:)``; `.wrongResultShape` for objects.
  @inlinable
  public func evaluateValues<S: QueryObjectSource>(
    _ object: S.Object, in source: S, variables: [String: QueryVariable<S.Object>] = [:]
  ) throws -> [Value?] {
    let context = EvaluationContext(source: source, variables: variables)
    switch code {
    case .value(let c): return [try c.evaluate(object, context)]
    case .values(let c): return try c.evaluate(object, context)
    case .objects:
      throw QueryError(.wrongResultShape, "\(self) gives objects, not values", offset: nil)
    }
  }

  /// The objects the expression reaches (`$source`, `$source.employees`, `company`): a
  /// to-one path gives zero or one object.
  ///
  /// - Throws: As ``evaluate(_:in:variables:)``; `.wrongResultShape` for values.
  @inlinable
  public func evaluateObjects<S: QueryObjectSource>(
    _ object: S.Object, in source: S, variables: [String: QueryVariable<S.Object>] = [:]
  ) throws -> [S.Object] {
    guard case .objects(let path) = code else {
      throw QueryError(.wrongResultShape, "\(self) gives \(resultType), not objects", offset: nil)
    }
    return try path.objects(object, EvaluationContext(source: source, variables: variables))
  }

  /// The canonical text of the expression.
  public var description: String { expression.description }
}
