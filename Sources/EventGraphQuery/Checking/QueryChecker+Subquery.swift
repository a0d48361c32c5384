extension QueryChecker {
  /// `SUBQUERY(collection, $x, predicate)` and the key path after it: the predicate is
  /// checked with `$x` an object of the collection's entity, besides the variables
  /// already declared; its bare key paths are the evaluated object's.
  func subquery(_ s: QuerySubquery, at offset: Int?) throws(QueryError) -> Checked {
    let collectionOffset = s.collection.sourceOffset ?? offset
    guard case .objects(let collection, let id) = try expression(s.collection), collection.isToMany,
      let destination = model.entity(id)
    else {
      throw error(
        .typeMismatch, "SUBQUERY's collection \(quote(s.collection)) is not a to-many relationship",
        at: collectionOffset)
    }
    guard variables[s.variable] == nil else {
      throw error(
        .typeMismatch, "SUBQUERY's $\(s.variable) is already a variable: name the element otherwise",
        at: offset)
    }
    var scoped = variables
    scoped[s.variable] = QueryType(.object(id))
    let inner = QueryChecker(model: model, entity: entity, variables: scoped, source: source)
    let predicate = try inner.predicate(s.predicate)
    let root = PathRoot.subquery(collection, s.variable, predicate)
    return try follow(s.tail, from: root, entity: destination, isToMany: true, at: offset)
  }
}
