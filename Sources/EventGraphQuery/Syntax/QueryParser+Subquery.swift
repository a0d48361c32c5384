/// Foundation's `SUBQUERY(collection, $variable, predicate)`, then the key path after it.
extension QueryParser {
  /// The subquery of the arguments read, with the `.@count`/`.name` steps that follow the
  /// closing parenthesis (the current token on entry).
  mutating func subquery(
    _ collection: QueryExpression, _ variable: QueryExpression, _ predicate: QueryPredicate, at start: Int
  ) throws(QueryError) -> QueryExpression {
    guard case .keyPath(let path) = collection.kind, !path.components.isEmpty || path.variable != nil else {
      throw fail(
        "SUBQUERY's first argument is a to-many key path, as in SUBQUERY(items, $i, $i.price > 250)",
        at: collection.sourceOffset ?? start)
    }
    guard case .keyPath(let v) = variable.kind, let name = v.variable, v.components.isEmpty else {
      throw fail(
        "SUBQUERY's second argument is the $variable each element is bound to, as in SUBQUERY(items, $i, …)",
        at: variable.sourceOffset ?? start)
    }
    var components: [QueryKeyPath.Component] = []
    var offsets: [Int] = []
    try keyPathTail(&components, &offsets)
    let s = QuerySubquery(
      collection: collection, variable: name, predicate: predicate,
      tail: QueryKeyPath(variable: nil, components: components, offsets: offsets))
    return try checked(QueryExpression(.subquery(s), at: start))
  }
}
