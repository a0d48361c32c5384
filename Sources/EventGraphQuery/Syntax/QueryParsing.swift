extension QueryPredicate {
  /// Parses predicate text: `phone1 != nil || phone2 != nil`.
  ///
  /// - Throws: ``QueryError`` of kind `.syntax` (or `.tooDeep`) with the offset of the
  ///   token at fault and what was expected there.
  init(parsing text: String) throws(QueryError) {
    var parser = try QueryParser(text, mode: .predicate)
    self = try parser.parseWholePredicate()
  }
}

extension QueryExpression {
  /// Parses value-expression text: `$source.phone1`, `concat(firstName, ' ', lastName)`.
  ///
  /// - Throws: ``QueryError`` of kind `.syntax` (or `.tooDeep`) with the offset of the
  ///   token at fault and what was expected there.
  init(parsing text: String) throws(QueryError) {
    var parser = try QueryParser(text, mode: .expression)
    self = try parser.parseWholeExpression()
  }
}
