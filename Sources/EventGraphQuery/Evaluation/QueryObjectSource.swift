import EventGraphModel

/// Where predicates and expressions read objects from: the store, a migration's source
/// model, an in-memory table in a test.
///
/// ```swift
/// struct Rows: QueryObjectSource {
///   func value(of row: [Value?], attribute: PropertyID) -> Value? { row[Int(attribute.rawValue)] }
///   func related(to row: [Value?], relationship: PropertyID) -> [[Value?]] { [] }
/// }
/// let adults = try CompiledPredicate.compile("age >= 18", entity: person, model: model)
/// let isAdult = try adults.evaluate(row, in: Rows())
/// ```
///
/// Property IDs are those of the entity the query was compiled for; a sub-entity's
/// objects answer to the same IDs (a sub-entity lists its parent's properties first).
public protocol QueryObjectSource {
  associatedtype Object

  /// The value of an attribute, `nil` when it has none.
  func value(of object: Object, attribute: PropertyID) throws -> Value?

  /// The objects a relationship leads to, in order for an ordered relationship; a
  /// to-one relationship gives zero or one object.
  func related(to object: Object, relationship: PropertyID) throws -> [Object]

  /// The object at one place of an ordered relationship (`[FIRST]`, `[LAST]`, `[n]`),
  /// `nil` past either end. The default picks it from ``related(to:relationship:)``; a
  /// source that can reach a place without the whole list implements it.
  func related(to object: Object, relationship: PropertyID, at element: QueryElementIndex) throws -> Object?
}

extension QueryObjectSource {
  public func related(to object: Object, relationship: PropertyID, at element: QueryElementIndex) throws -> Object? {
    element.pick(try related(to: object, relationship: relationship))
  }
}

/// The value a `$variable` stands for in one evaluation.
///
/// Its shape must match the ``QueryType`` the variable was declared with when the query
/// was compiled: `.value` for `.value(_)`, `.values` for `.values(_)`, `.object` for
/// `.object(_)`, `.objects` for `.objects(_)`.
public enum QueryVariable<Object> {
  case value(Value?)
  case values([Value?])
  case object(Object)
  case objects([Object])
}

extension QueryVariable: Sendable where Object: Sendable {}

/// The object source and the variables of one evaluation.
@usableFromInline
struct EvaluationContext<Source: QueryObjectSource> {
  @usableFromInline let source: Source
  @usableFromInline let variables: [String: QueryVariable<Source.Object>]

  @inlinable
  init(source: Source, variables: [String: QueryVariable<Source.Object>]) {
    self.source = source
    self.variables = variables
  }

  @inlinable
  func variable(_ name: String, offset: Int?) throws(QueryError) -> QueryVariable<Source.Object> {
    guard let v = variables[name] else {
      throw QueryError(.unknownVariable, "variable $\(name) is not bound", offset: offset)
    }
    return v
  }

  @usableFromInline
  static func wrongShape(_ name: String, _ expected: String, offset: Int?) -> QueryError {
    QueryError(
      .unknownVariable, "variable $\(name) is bound to the wrong kind of value: expected \(expected)", offset: offset)
  }
}
