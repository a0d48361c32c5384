import EventGraphLocking
import Foundation

extension AttributeOverride {
  /// An override computed by a value expression of the query language, evaluated on the
  /// original object as it was copied: `concat(name, ' (copy)')`, `uuid()`, `now()`,
  /// `uppercase(name)`.
  ///
  /// Key paths may name the object's own attributes (not its
  /// relationships: the copy's neighbours are being made at the same time).
  ///
  /// The text is parsed at once, so a syntax error is thrown before the clone starts; it
  /// is checked against each copied entity the first time one is met.
  ///
  /// - Throws: ``QueryError`` naming the position of a syntax error.
  public static func expression(_ text: String) throws -> AttributeOverride {
    try CompiledExpression.checkSyntax(text)
    let compiled = Locked<[EntityID: CompiledExpression]>([:])
    return AttributeOverride { context in
      let expression = try compiled.withLock { cache throws -> CompiledExpression in
        if let e = cache[context.entity.id] { return e }
        let e = try CompiledExpression.compile(text, entity: context.entity.id, model: context.model)
        cache[context.entity.id] = e
        return e
      }
      return try expression.evaluate(0, in: OriginalObject(state: context.original.state))
    }
  }
}

/// The original object of a copy, as a query source of one object with no relationships.
private struct OriginalObject: QueryObjectSource {
  let state: ObjectState
  func value(of object: Int, attribute: PropertyID) -> Value? { state[attribute] }
  func related(to object: Int, relationship: PropertyID) -> [Int] { [] }
}
