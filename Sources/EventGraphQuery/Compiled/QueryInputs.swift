import EventGraphModel

/// What a compiled predicate or expression reads, so that a caller evaluating it again
/// after a change can tell whether the result may differ (an upcast skips the mappings a
/// commit cannot have changed).

extension CompiledPredicate {
  /// The attributes of the evaluated object that the predicate reads, when that is all it
  /// reads; `nil` when it also reads relationships, other objects, variables other than
  /// `selves`, or calls `now()` or `uuid()`.
  ///
  /// - Parameters:
  ///   - selves: Variables bound to the evaluated object itself (an upcast binds
  ///     `$source` to the object a mapping's filter is evaluated on).
  ///   - constants: Variables bound to values that do not change between evaluations (a
  ///     live query's): read like literals.
  package func ownAttributes(selves: Set<String> = [], constants: Set<String> = []) -> Set<PropertyID>? {
    var inputs = QueryInputs(selves: selves, constants: constants)
    inputs.add(code)
    return inputs.attributes
  }
}

extension CompiledExpression {
  /// The attributes of the evaluated object that the expression reads, when that is all it
  /// reads; `nil` otherwise (see ``CompiledPredicate/ownAttributes(selves:)``).
  package func ownAttributes(selves: Set<String> = [], constants: Set<String> = []) -> Set<PropertyID>? {
    var inputs = QueryInputs(selves: selves, constants: constants)
    switch code {
    case .value(let c): inputs.add(c)
    case .values(let c): inputs.add(c)
    case .objects(let c): inputs.add(c)
    }
    return inputs.attributes
  }

  /// Whether the expression is the evaluated object itself (`$source`, with `selves` =
  /// `["source"]`): it reads nothing of the object's state.
  package func isSelf(selves: Set<String>) -> Bool {
    guard case .objects(let c) = code, c.steps.isEmpty else { return false }
    switch c.root {
    case .object: return true
    case .variable(let name, _): return selves.contains(name)
    case .subquery: return false
    }
  }
}

/// Collects the own attributes a compiled tree reads; `attributes` turns `nil` at the first
/// read of anything else.
private struct QueryInputs {
  let selves: Set<String>
  let constants: Set<String>
  var attributes: Set<PropertyID>? = []

  init(selves: Set<String>, constants: Set<String>) {
    self.selves = selves
    self.constants = constants
  }

  /// A variable's value: a constant reads nothing, any other variable something else.
  private mutating func variable(_ name: String) { if !constants.contains(name) { readsMore() } }

  private mutating func read(_ p: PropertyID) { attributes?.insert(p) }
  private mutating func readsMore() { attributes = nil }

  /// A key path is the object itself only with no steps from the object or a self variable.
  private mutating func add(path c: ObjectsCode) -> Bool {
    guard c.steps.isEmpty else {
      readsMore()
      return false
    }
    switch c.root {
    case .object: return true
    case .variable(let name, _):
      if selves.contains(name) { return true }
      readsMore()
      return false
    case .subquery:
      readsMore()
      return false
    }
  }

  mutating func add(_ c: ObjectsCode) { _ = add(path: c) }

  mutating func add(_ c: PredicateCode) {
    guard attributes != nil else { return }
    switch c {
    case .constant: break
    case .not(let p): add(p)
    case .and(let a, let b), .or(let a, let b):
      add(a)
      add(b)
    case .attributeIsNil(let p, _), .attributeTest(let p, _): read(p)
    case .valueTest(let v, _): add(v)
    case .compare(let a, _, _, let b):
      add(a)
      add(b)
    case .member(let v, _, let m):
      add(v)
      add(m)
    case .between(let v, _, let low, let high):
      add(v)
      add(low)
      add(high)
    case .quantified(_, let m, let right):
      add(m)
      switch right {
      case .constant: break
      case .value(_, _, let v): add(v)
      case .collection(_, let other): add(other)
      case .bounds(_, let low, let high):
        add(low)
        add(high)
      }
    case .objectIsNil(let path, _): add(path)
    }
  }

  mutating func add(_ c: ValueCode) {
    guard attributes != nil else { return }
    switch c {
    case .literal: break
    case .attribute(let p): read(p)
    case .attributeOf(let path, let p): if add(path: path) { read(p) }
    case .variable(let name, _): variable(name)
    case .countObjects(let path): add(path)
    case .countValues(let m), .aggregate(_, let m, _, _): add(m)
    case .arithmetic(_, let a, let b, _):
      add(a)
      add(b)
    case .negation(let v, _): add(v)
    case .function(let f, let arguments, _):
      switch f {
      case .now, .uuid: readsMore()  // a new value at every evaluation
      case .uppercase, .lowercase, .trim, .concat, .coalesce, .length, .abs, .utf16length, .date, .number:
        for a in arguments { add(a) }
      }
    }
  }

  mutating func add(_ c: ManyCode) {
    guard attributes != nil else { return }
    switch c {
    case .attributeOf(let path, let p): if add(path: path) { read(p) }
    case .list(let items): for v in items { add(v) }
    case .variable(let name, _): variable(name)
    }
  }
}
